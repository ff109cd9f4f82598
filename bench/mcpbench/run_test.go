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
	// MCPBENCH_FAKE_BAD=kind@n: the n-th tools/call is answered badly.
	bad, at := "", 0
	if v := os.Getenv("MCPBENCH_FAKE_BAD"); v != "" {
		k, n, _ := strings.Cut(v, "@")
		bad, at = k, atoi(n)
	}
	br := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	calls := 0
	var held []byte // "reorder": an answer kept back until the next one is written
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
		case "tools/list":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}`+"\n", m.ID)
		case "tools/call":
			calls++
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok %d"}]}}`+"\n", m.ID, calls)
			if mode == "chatty" && calls%50 == 0 {
				// Interleaved with the answers: a notification and a
				// request, written before the answer.
				fmt.Fprintf(out, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":%d}}`+"\n", calls)
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"srv-%d","method":"sampling/createMessage","params":{}}`+"\n", calls)
			}
			if calls == at {
				switch bad {
				case "rpcerror":
					answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"boom"}}`+"\n", m.ID)
				case "iserror":
					answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"order not found"}],"isError":true}}`+"\n", m.ID)
				case "nocontent":
					answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}`+"\n", m.ID)
				case "badjson":
					answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[`+"\n", m.ID)
				case "unknownid":
					answer = `{"jsonrpc":"2.0","id":999999,"result":{"content":[{"type":"text","text":"ok"}]}}` + "\n"
				case "dup":
					answer += answer
				}
			}
			if mode == "reorder" && held == nil && br.Buffered() > 0 {
				held = []byte(answer) // the next request is here already
				continue
			}
			out.WriteString(answer)
			if held != nil {
				out.Write(held)
				held = nil
			}
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`+"\n", m.ID)
		}
		out.Flush()
	}
	if mode == "hang" {
		time.Sleep(time.Minute)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
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

// fakeOptions("…") calls: 1 first, 2–11 warm-up, 12–211 sequential,
// 212–511 throughput.
func TestRunChecksEveryAnswer(t *testing.T) {
	for _, c := range []struct {
		bad  string
		want []string
	}{
		{"rpcerror", []string{"tools/call t: JSON-RPC error -32000: boom"}},
		{"iserror", []string{"tools/call t: tool reported an error: ", "order not found"}},
		{"nocontent", []string{"tools/call t: tools/call result has no content"}},
		{"badjson", []string{"reading from the server: not a JSON-RPC message: unexpected end of JSON input"}},
		{"unknownid", []string{"reading from the server: response to an id we did not send: 999999"}},
		{"dup", []string{"response to an id we did not send: "}},
	} {
		for _, at := range []int{1, 5, 100, 400} {
			t.Run(fmt.Sprintf("%s@%d", c.bad, at), func(t *testing.T) {
				t.Parallel()
				o := fakeOptions("ok")
				o.ColdRuns = 1
				o.Env = append(o.Env, fmt.Sprintf("MCPBENCH_FAKE_BAD=%s@%d", c.bad, at))
				_, err := Run(context.Background(), o)
				if err == nil {
					t.Fatal("the run succeeded")
				}
				if !containsAll(err.Error(), c.want...) {
					t.Errorf("error %q, want it to say %q", err, c.want)
				}
			})
		}
	}
}

func TestRunChattyAndReordering(t *testing.T) {
	// Notifications and server requests among the answers are counted
	// (and the requests refused) in every phase.
	r, err := Run(context.Background(), fakeOptions("chatty"))
	if err != nil {
		t.Fatal(err)
	}
	// One of each at initialize (main run), one of each per 50 calls.
	if want := int64(1 + 511/50); r.ServerRequests != want || r.Notifications != want {
		t.Errorf("server requests %d, notifications %d; want %d of each", r.ServerRequests, r.Notifications, want)
	}
	// Answers out of order, as a concurrent server writes them.
	o := fakeOptions("reorder")
	o.TputCalls = 3000
	if r, err = Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if r.ThroughputCPS <= 0 {
		t.Errorf("throughput %v", r.ThroughputCPS)
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
