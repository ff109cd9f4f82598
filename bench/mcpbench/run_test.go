//go:build linux

package mcpbench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a tiny MCP server (fakeServer) when
// MCPBENCH_FAKE is set: "ok" answers, "hang" never exits on EOF and leaves
// a grandchild in its group.
func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPBENCH_FAKE"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) {
	if mode == "hang" {
		// A grandchild in the same process group, as npx or a shell
		// wrapper would leave.
		_ = exec.Command("sleep", "60").Start()
	}
	br := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		f, err := ReadFrame(br, MaxFrame)
		if err != nil {
			break
		}
		m, err := DecodeMessage(f)
		if err != nil || !m.IsRequest() {
			continue
		}
		switch m.Method {
		case "initialize":
			// A server-initiated request and a notification first: the
			// harness must refuse the one and skip the other.
			fmt.Fprintln(out, `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`)
			fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`+"\n", m.ID, ProtocolVersion)
		case "tools/call":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", m.ID)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", m.ID)
		}
		out.Flush()
	}
	if mode == "hang" {
		time.Sleep(time.Minute)
	}
}

func fakeOptions(mode string) Options {
	return Options{
		Name: "fake-" + mode, Command: []string{os.Args[0]}, Env: append(os.Environ(), "MCPBENCH_FAKE="+mode),
		Tool: "t", Args: json.RawMessage(`{}`), Calls: 200, Warmup: 10, TputCalls: 300, ColdRuns: 3,
		ExitWait: 10 * time.Second, Timeout: 20 * time.Second,
	}
}

func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still alive", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunFakeServer(t *testing.T) {
	r, err := Run(context.Background(), fakeOptions("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ColdStartAllMS) != 3 || r.ColdStartMS <= 0 || r.LatencyP50US <= 0 || r.LatencyP99US < r.LatencyP50US ||
		r.ThroughputCPS <= 0 || r.RSSMiB <= 0 || r.EOFExitMS < 0 || r.EOFExitIdleMS < 0 {
		t.Errorf("implausible result: %+v", r)
	}
	if r.ServerRequests != 1 || r.Notifications != 1 {
		t.Errorf("server requests %d, notifications %d; want 1 and 1", r.ServerRequests, r.Notifications)
	}
	if len(live.groups) != 0 {
		t.Errorf("groups left registered: %v", live.groups)
	}
}

func TestRunServerThatIgnoresEOF(t *testing.T) {
	o := fakeOptions("hang")
	o.ColdRuns, o.Calls, o.TputCalls = 1, 20, 20
	o.ExitWait = 300 * time.Millisecond
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.EOFExitMS != -1 || r.EOFExitIdleMS != -1 {
		t.Errorf("a server that does not exit must be reported as such: %v %v", r.EOFExitMS, r.EOFExitIdleMS)
	}
	// Its group, grandchild included, was killed.
	s, err := Start(o.Command, o.Env)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g, err := SampleGroup(s.PGID()); err != nil || len(g.PIDs) != 2 {
		t.Errorf("want the server and its grandchild in the group: %+v %v", g, err)
	}
	s.Kill()
	groupGone(t, s.PGID())
}

func TestStartFailures(t *testing.T) {
	if _, err := Start([]string{"/nonexistent/mcp-server"}, nil); err == nil {
		t.Error("a missing command must fail")
	}
	// A server that exits at once: the error carries its stderr.
	o := fakeOptions("ok")
	o.Command = []string{"sh", "-c", "echo boom >&2; exit 3"}
	o.Env = nil
	if _, err := Run(context.Background(), o); err == nil || !containsAll(err.Error(), "boom", "exit status 3") {
		t.Errorf("want the exit and stderr in the error, got %v", err)
	}
	// A tool call that fails makes the run fail.
	o = fakeOptions("ok")
	o.Tool = ""
	if _, err := ToolsCallParams(o.Tool, json.RawMessage(`nope`)); err == nil {
		t.Error("bad args accepted")
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
