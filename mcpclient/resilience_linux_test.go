package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// crashyServer connects the test server that exits on every nth call.
func crashyServer(t *testing.T, every int, opts ...ConnectOption) (*Bridge, string) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	cfg := mcpconfig.Server{Name: "crashy", Command: testServerPath(t),
		Args: []string{"-pidfile", pidfile, "-live", "-crash-every", itoa(every)}}
	b, err := Connect(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, pidfile
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// toolResults returns the contents of the tool messages of a run, in order.
func toolResults(res *agent.Result) []string {
	var out []string
	for _, m := range res.Messages {
		if m.Role == model.RoleTool {
			out = append(out, m.Content)
		}
	}
	return out
}

// TestCrashDuringCallSeenByModelThenRestart: the server exits while the
// third call runs; the model sees an error naming the server, the exit
// status and the server's last stderr line; the next call (same run)
// reaches a restarted process; the crashed one is gone from the process
// table.
func TestCrashDuringCallSeenByModelThenRestart(t *testing.T) {
	b, pidfile := crashyServer(t, 3, WithLogger(discardLogger()))
	oldPid, oldGroup := serverIDs(t, pidfile)
	tools, err := agent.NewToolSet(b.Tools()...)
	if err != nil {
		t.Fatal(err)
	}
	echo := func(id, text string) scripted.Turn {
		return scripted.Turn{Calls: []model.ToolCall{scripted.Call(id, "echo", map[string]string{"text": text})}}
	}
	m := scripted.New(echo("1", "a"), echo("2", "b"), echo("3", "c"), echo("4", "d"), scripted.Turn{Text: "done"})
	res, err := agent.Run(context.Background(), agent.Options{
		Model: m, Tools: tools, MaxSteps: 10,
		Messages: []model.Message{{Role: model.RoleUser, Content: "go"}},
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	got := toolResults(res)
	if len(got) != 4 || got[0] != `{"echo":"a"}` || got[1] != `{"echo":"b"}` || got[3] != `{"echo":"d"}` {
		t.Fatalf("tool results %q", got)
	}
	for _, want := range []string{
		"tool echo could not be called: MCP server crashy stopped while the call was running: its process exited (exit status 7)",
		"its last stderr lines: ",
		"testserver: crashing on call 3",
		"it is restarted on the next call",
	} {
		if !strings.Contains(got[2], want) {
			t.Errorf("the model saw %s\nwant it to contain %q", got[2], want)
		}
	}
	newPid, _ := serverIDs(t, pidfile)
	if newPid == oldPid {
		t.Fatalf("the call after the crash did not reach a new process (pid %d)", newPid)
	}
	if running(oldPid) || len(testkit.LiveGroup(t, oldGroup)) > 0 {
		t.Errorf("the crashed server %d (group %d) is still in the process table", oldPid, oldGroup)
	}
	if st := b.Status(); st.State != StateConnected || st.Restarts != 1 || st.Tools != len(tools.Names()) {
		t.Errorf("status after the restart: %+v", st)
	}
}

// TestIdleCrashRestartsOnNextCall: a server killed while idle is noticed
// at once (state restarting, with the signal) and the next call restarts it
// without the caller seeing anything.
func TestIdleCrashRestartsOnNextCall(t *testing.T) {
	b, pidfile := crashyServer(t, 0, WithLogger(discardLogger()))
	pid, group := serverIDs(t, pidfile)
	ended := curConn(b).ended
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-ended
	st := b.Status()
	if st.State != StateRestarting || !strings.Contains(st.Detail, "signal: killed") {
		t.Errorf("status after the kill: %+v", st)
	}
	if got, err := adExec(t, adTool(t, b, "echo"), `{"text":"again"}`); err != nil || got != `{"echo":"again"}` {
		t.Fatalf("call after the idle crash: %q, %v", got, err)
	}
	if newPid, _ := serverIDs(t, pidfile); newPid == pid {
		t.Errorf("no new process")
	}
	if left := testkit.LiveGroup(t, group); len(left) > 0 {
		t.Errorf("the killed server's group still has %v", left)
	}
	if st := b.Status(); st.State != StateConnected || st.Detail != "" {
		t.Errorf("status after the restart: %+v", st)
	}
}

// TestStatusStateComesWithItsReason: the bridge's child (a wrapper script)
// is killed while the real server, the wrapper's child, keeps the stdout
// and stderr pipes open, so the session does not end and the server's last
// stderr lines are slow to come. Once the process is known to be gone,
// Status must report the stop together with why (the signal and the stderr
// tail), never "restarting" without a reason; the next call restarts the
// server. The bridge has no logger, so none of this reaches the default
// logger.
func TestStatusStateComesWithItsReason(t *testing.T) {
	global := testkit.RecordDefaultLogger(t)
	cfg, pidfile := wrappedServer(t, "normal")
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	server, _ := serverIDs(t, pidfile)
	p := curConn(b).proc
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	st := b.Status()
	if st.State != StateRestarting || !strings.Contains(st.Detail, "its process exited (signal: killed)") ||
		!strings.Contains(st.Detail, "testserver starting in mode normal") {
		t.Fatalf("status once the process is gone: %+v; want restarting, with the signal and the last stderr line", st)
	}
	if again := b.Status(); again != st {
		t.Errorf("status changed from %+v to %+v with nothing happening", st, again)
	}

	if got, err := adExec(t, adTool(t, b, "echo"), `{"text":"again"}`); err != nil || got != `{"echo":"again"}` {
		t.Fatalf("call after the kill: %q, %v", got, err)
	}
	if running(server) {
		t.Errorf("the orphaned server %d outlived the restart", server)
	}
	if st := b.Status(); st.State != StateConnected || st.Restarts != 1 || st.Detail != "" {
		t.Errorf("status after the restart: %+v", st)
	}
	if s := global.String(); s != "" {
		t.Errorf("the default logger received %q", s)
	}
}

// TestRestartBudgetThenDownUntilRestart: a server that dies on every call
// is restarted three times (with growing backoff), then it is down: calls
// fail at once without spawning anything, until Restart; the budget is per
// window.
func TestRestartBudgetThenDownUntilRestart(t *testing.T) {
	clock := newFakeClock()
	b, pidfile := crashyServer(t, 1, withRestartPolicy(clock.policy()), WithLogger(discardLogger()))
	echo := adTool(t, b, "echo")
	var pids []int
	for i := range 4 {
		pid, _ := serverIDs(t, pidfile)
		pids = append(pids, pid)
		_, err := adExec(t, echo, `{"text":"x"}`)
		var exitErr *serverExitError
		if !errors.As(err, &exitErr) || !strings.Contains(err.Error(), "exit status 7") {
			t.Fatalf("call %d: %v, want the crash error", i+1, err)
		}
		clock.advance(5 * time.Second)
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second}; !equalDurations(clock.sleeps, want) {
		t.Errorf("backoffs %v, want %v (none before the first restart)", clock.sleeps, want)
	}
	lastPid, _ := serverIDs(t, pidfile)
	_, err := adExec(t, echo, `{"text":"x"}`)
	wantCallErr(t, err, KindConnection, "")
	for _, want := range []string{"tool echo could not be called: MCP server crashy is down: it stopped again after 3 restarts within 1m0s (last: its process exited (exit status 7)", "/mcp restart crashy"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("down error %q lacks %q", err, want)
		}
	}
	if pid, _ := serverIDs(t, pidfile); pid != lastPid {
		t.Errorf("a down server was spawned again (pid %d)", pid)
	}
	for _, p := range append(pids, lastPid) {
		if running(p) {
			t.Errorf("crashed server %d still running", p)
		}
	}
	if st := b.Status(); st.State != StateDown || st.Restarts != 3 {
		t.Errorf("status: %+v", st)
	}

	if err := b.Restart(context.Background()); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	pid, _ := serverIDs(t, pidfile)
	if pid == lastPid || !running(pid) {
		t.Fatalf("Restart did not start a new process")
	}
	if st := b.Status(); st.State != StateConnected || st.Restarts != 0 {
		t.Errorf("status after Restart: %+v", st)
	}
	// A minute later the automatic restarts are back too.
	_, err = adExec(t, echo, `{"text":"x"}`) // crashes
	var exitErr *serverExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("after Restart: %v", err)
	}
	clock.advance(2 * time.Minute)
	_, err = adExec(t, echo, `{"text":"x"}`) // restarted, then crashes again
	if !errors.As(err, &exitErr) {
		t.Fatalf("after the window: %v, want a restart (and its crash), not down", err)
	}
}

// TestToolListChangedRefreshesBeforeNextModelCall: the model calls addtool,
// the server announces the change, and the next request of the same run
// offers the new tool, which the model then calls.
func TestToolListChangedRefreshesBeforeNextModelCall(t *testing.T) {
	b, _ := crashyServer(t, 0)
	// The notification follows addtool's answer; the tool waits for it so
	// that it has arrived before the run's next refresh.
	build := func() *agent.ToolSet {
		tools := b.Tools()
		for i, tl := range tools {
			if tl.Name == "addtool" {
				inner := tl.Execute
				w := &agent.Tool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Origin: tl.Origin}
				w.Execute = func(ctx context.Context, args json.RawMessage) (any, error) {
					out, err := inner(ctx, args)
					select {
					case <-b.toolsChanged():
					case <-time.After(15 * time.Second):
						t.Error("no notifications/tools/list_changed after addtool")
					}
					return out, err
				}
				tools[i] = w
			}
		}
		s, err := agent.NewToolSet(tools...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tools := build()
	var seen uint64
	refresh := func(ctx context.Context) *agent.ToolSet {
		gen, err := b.Refresh(ctx)
		if err != nil {
			t.Errorf("Refresh: %v", err)
		}
		if gen == seen {
			return nil
		}
		seen = gen
		return build()
	}
	seen, _ = b.Refresh(context.Background())
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("1", "addtool", `{"name":"fresh"}`)}},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("2", "fresh", `{}`)}},
		scripted.Turn{Text: "done"},
	)
	res, err := agent.Run(context.Background(), agent.Options{
		Model: m, Tools: tools, Refresh: refresh,
		Messages: []model.Message{{Role: model.RoleUser, Content: "go"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolResults(res); len(got) != 2 || got[0] != "added fresh" || got[1] != "fresh works" {
		t.Fatalf("tool results %q", got)
	}
	reqs := m.Requests()
	if hasTool(reqs[0].Tools, "fresh") || !hasTool(reqs[1].Tools, "fresh") {
		t.Errorf("fresh offered in request 1: %v, in request 2: %v; want only in 2", hasTool(reqs[0].Tools, "fresh"), hasTool(reqs[1].Tools, "fresh"))
	}
}

func hasTool(specs []model.ToolSpec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}
