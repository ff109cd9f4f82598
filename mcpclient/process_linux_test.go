package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/internal/testkit"
)

// running reports whether pid is a live (not zombie) process.
func running(pid int) bool {
	p, ok := testkit.ReadProc(pid)
	return ok && p.Live()
}

// serverIDs reads the pid and process group the test server wrote.
func serverIDs(t *testing.T, pidfile string) (pid, pgid int) {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("the test server wrote no pid file: %v", err)
	}
	if _, err := fmt.Sscan(string(b), &pid, &pgid); err != nil {
		t.Fatalf("pid file %q: %v", b, err)
	}
	return pid, pgid
}

func wrappedServer(t *testing.T, mode string) (mcpconfig.Server, string) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "pid")
	return mcpconfig.Server{
		Name:    "ts-" + mode,
		Command: wrapperPath(t),
		Args:    []string{testServerPath(t), "-mode", mode, "-pidfile", pidfile},
	}, pidfile
}

func TestStdioWrapperCloseLeavesNoProcess(t *testing.T) {
	cfg, pidfile := wrappedServer(t, "normal")
	b, err := Connect(context.Background(), cfg, WithGracePeriods(2*time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	pid, pgid := serverIDs(t, pidfile)
	if p, _ := testkit.ReadProc(pid); p.PPID == os.Getpid() {
		t.Fatalf("the server is our child; the wrapper should have made it a grandchild")
	}
	if pgid != curConn(b).proc.Pgid() {
		t.Fatalf("server runs in group %d, want the bridge's group %d", pgid, curConn(b).proc.Pgid())
	}
	got, err := adExec(t, adTool(t, b, "echo"), `{"text":"hi"}`)
	if err != nil || got != `{"echo":"hi"}` {
		t.Fatalf("echo: %q, %v", got, err)
	}
	if n := len(testkit.LiveGroup(t, pgid)); n != 2 {
		t.Fatalf("group %d has %d live processes before Close, want 2 (wrapper and server)", pgid, n)
	}
	if tail := b.stderrTail(); len(tail) == 0 || tail[0] != "testserver starting in mode normal" {
		t.Errorf("StderrTail = %q", tail)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if left := testkit.LiveGroup(t, pgid); len(left) > 0 {
		t.Fatalf("processes of group %d left after Close: %v", pgid, left)
	}
}

func TestStdioStubbornServerKilledWithinGrace(t *testing.T) {
	cfg, pidfile := wrappedServer(t, "ignore-term")
	const grace = 300 * time.Millisecond
	global := testkit.RecordDefaultLogger(t)
	logger, logs := testkit.NewLogger()
	b, err := Connect(context.Background(), cfg, WithGracePeriods(grace, grace), WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	pid, pgid := serverIDs(t, pidfile)
	start := time.Now()
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	took := time.Since(start)
	if bound := 2*grace + supervise.KillWait + 2*time.Second; took > bound {
		t.Errorf("Close took %v, more than the grace periods plus margin (%v)", took, bound)
	}
	if running(pid) {
		t.Fatalf("server %d survived Close", pid)
	}
	if left := testkit.LiveGroup(t, pgid); len(left) > 0 {
		t.Fatalf("processes of group %d left after Close: %v", pgid, left)
	}
	if tail := strings.Join(b.stderrTail(), "\n"); !strings.Contains(tail, "staying alive anyway") {
		t.Errorf("the server did not see stdin EOF before being killed; stderr:\n%s", tail)
	}
	// The escalations are logged on the bridge's logger, naming the server.
	for _, want := range []string{"did not exit 300ms after stdin was closed; sending SIGTERM", "did not exit 300ms after SIGTERM; killing its process group", "server=ts-ignore-term"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not contain %q:\n%s", want, logs.String())
		}
	}
	if global.String() != "" {
		t.Errorf("the default logger received %q; the bridge logs only on its own logger", global.String())
	}
}

func TestConnectMissingCommand(t *testing.T) {
	_, err := Connect(context.Background(), mcpconfig.Server{Name: "ghost", Command: "agentapp-no-such-server-xyz"})
	if err == nil {
		t.Fatal("connected to a command that does not exist")
	}
	want := "MCP server ghost: command not found: agentapp-no-such-server-xyz (is it installed and on PATH?)"
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if !errors.Is(err, supervise.ErrCommandNotFound) {
		t.Errorf("error does not wrap supervise.ErrCommandNotFound")
	}
}

func TestConnectNeverInitializes(t *testing.T) {
	cfg, pidfile := wrappedServer(t, "no-init")
	cfg.ConnectTimeout = 400 * time.Millisecond
	start := time.Now()
	_, err := Connect(context.Background(), cfg)
	took := time.Since(start)
	if err == nil {
		t.Fatal("connected to a server that never answers initialize")
	}
	msg := err.Error()
	for _, want := range []string{
		"connecting to MCP server ts-no-init (command: " + wrapperPath(t),
		"failed during initialize: no answer within 400ms (the connect timeout)",
		"last lines on its stderr:\n  testserver starting in mode no-init",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if took > 400*time.Millisecond+supervise.KillWait+2*time.Second {
		t.Errorf("failed connect took %v", took)
	}
	pid, pgid := serverIDs(t, pidfile)
	if running(pid) {
		t.Errorf("server %d still running after the failed connect", pid)
	}
	if left := testkit.LiveGroup(t, pgid); len(left) > 0 {
		t.Errorf("processes of group %d left: %v", pgid, left)
	}
}

func TestConnectServerExitsAtStart(t *testing.T) {
	cfg := mcpconfig.Server{Name: "quitter", Command: testServerPath(t), Args: []string{"-mode", "exit-start"}}
	_, err := Connect(context.Background(), cfg)
	if err == nil {
		t.Fatal("connected to a server that exited")
	}
	for _, want := range []string{"failed during initialize: the server exited (exit status 3)", "fatal: no API key configured"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%s", want, err)
		}
	}
}

func TestGarbageStdoutLinesAreSkipped(t *testing.T) {
	logger, logs := testkit.NewLogger()
	cfg := mcpconfig.Server{Name: "noisy", Command: testServerPath(t), Args: []string{"-mode", "garbage"}}
	b, err := Connect(context.Background(), cfg, WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := adExec(t, adTool(t, b, "noise"), `{}`); err != nil || got != "still alive" {
		t.Fatalf("noise: %q, %v", got, err)
	}
	if got, err := adExec(t, adTool(t, b, "echo"), `{"text":"after"}`); err != nil || got != `{"echo":"after"}` {
		t.Fatalf("echo after garbage: %q, %v", got, err)
	}
	out := logs.String()
	for _, line := range []string{"Server banner: welcome!", "{not json", "[1, 2", "debug: noise tool called",
		`{"level":30,"msg":"listening on stdio"}`} {
		if !strings.Contains(out, "server=noisy") || !strings.Contains(out, strconv.Quote(line)) {
			t.Errorf("skipped line %q not logged with the server name; log:\n%s", line, out)
		}
	}
}

func TestRawServerPagesSchemasAndLegacyResult(t *testing.T) {
	const (
		// The exact bytes internal/testserver sends in raw mode.
		schemaA = `{ "type": "object",  "properties": { "zeta": {"type":"number", "minimum": 1.50}, "alpha": {"type":"string"} }, "required": ["zeta"] }`
		schemaB = `{"properties":{},"type":"object","additionalProperties":false}`
	)
	cfg := mcpconfig.Server{Name: "raw", Command: testServerPath(t), Args: []string{"-mode", "raw"}, ToolPrefix: "raw_"}
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tools := b.Tools()
	if len(tools) != 2 {
		t.Fatalf("got %d tools, want 2 (one per tools/list page)", len(tools))
	}
	if tools[0].Name != "raw_a" || string(tools[0].InputSchema) != schemaA {
		t.Errorf("tool %s schema\n%s\nwant byte for byte\n%s", tools[0].Name, tools[0].InputSchema, schemaA)
	}
	if tools[1].Name != "raw_legacy" || string(tools[1].InputSchema) != schemaB {
		t.Errorf("tool %s schema\n%s\nwant\n%s", tools[1].Name, tools[1].InputSchema, schemaB)
	}
	if got, err := adExec(t, tools[1], `{}`); err != nil || got != `{"z":1,"a":[true,null]}` {
		t.Errorf("legacy toolResult: %q, %v", got, err)
	}
	if got, err := adExec(t, tools[0], `{"zeta":2}`); err != nil || got != "a called" {
		t.Errorf("a: %q, %v", got, err)
	}
}

func TestOversizedFrameIsRefused(t *testing.T) {
	cfg := mcpconfig.Server{Name: "big", Command: testServerPath(t)}
	b, err := Connect(context.Background(), cfg, withMaxFrame(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = adExec(t, adTool(t, b, "big"), `{"n":10000}`)
	wantCallErr(t, err, KindRejected, "")
	if !strings.Contains(err.Error(), "over the 4096-byte limit; it was refused") {
		t.Errorf("error %q", err)
	}
	if got, err := adExec(t, adTool(t, b, "big"), `{"n":10}`); err != nil || got != "xxxxxxxxxx" {
		t.Errorf("session after the refused frame: %q, %v", got, err)
	}
}

func TestCallTimeoutCancelsOnStdioServer(t *testing.T) {
	sink := &testkit.SyncBuffer{}
	cfg := mcpconfig.Server{Name: "ts", Command: testServerPath(t), CallTimeout: 200 * time.Millisecond}
	b, err := Connect(context.Background(), cfg, WithStderrEcho(sink))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = adExec(t, adTool(t, b, "sleep"), `{}`)
	wantCallErr(t, err, KindTimeout, "tool sleep timed out after 0.2 s and was cancelled; try a smaller request or try again later")
	sink.WaitFor(t, "[ts] testserver: sleep cancelled", 15*time.Second)
	if got, err := adExec(t, adTool(t, b, "echo"), `{"text":"x"}`); err != nil || got != `{"echo":"x"}` {
		t.Errorf("session after a timeout: %q, %v", got, err)
	}
}

func TestCloseCancelsCallsInFlight(t *testing.T) {
	sink := &testkit.SyncBuffer{}
	cfg := mcpconfig.Server{Name: "ts", Command: testServerPath(t)}
	b, err := Connect(context.Background(), cfg, WithStderrEcho(sink))
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := adTool(t, b, "sleep").Execute(context.Background(), nil)
		errc <- err
	}()
	sink.WaitFor(t, "sleep started", 15*time.Second)
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	err = <-errc
	wantCallErr(t, err, KindConnection, "tool sleep could not be called: the connection to server ts was closed")
}

func TestStdioEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	cfg := mcpconfig.Server{
		Name: "ts", Command: testServerPath(t), Dir: dir,
		Env: map[string]string{"AGENTMCP_TEST_VAR": "from config"},
	}
	t.Setenv("AGENTMCP_PARENT_VAR", "inherited")
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	env := adTool(t, b, "env")
	for name, want := range map[string]string{
		"AGENTMCP_TEST_VAR":   "from config",
		"AGENTMCP_PARENT_VAR": "inherited", // merged over, not replacing, our environment
	} {
		got, err := adExec(t, env, `{"name":"`+name+`"}`)
		if err != nil || got != want+"|"+dir {
			t.Errorf("%s: the server sees %q, %v; want %q", name, got, err, want+"|"+dir)
		}
	}
}
