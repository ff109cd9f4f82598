package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// directSession is a server on its own IOTransport over pipes, with the
// direct path or with it turned off (Options.NoDirectCalls), spoken to in
// raw JSON-RPC lines.
func directSession(t *testing.T, opts *mcpserver.Options, direct bool) (*rawSession, *mcpserver.Server) {
	t.Helper()
	opts.NoDirectCalls = !direct
	srv := mcpserver.New(opts)
	return newRawSessionOn(t, srv, rawTransports[2].make), srv
}

// directCases are tools/call lines, each with whether the direct path
// takes it.
var directCases = []struct {
	name, line string
	direct     bool
}{
	{"ok", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`, true},
	{"string id, spaces", `{ "jsonrpc" : "2.0", "id" : "x-1", "method" : "tools/call", "params" : { "arguments" : { "orderId" : "A-2048" } , "name" : "getOrderStatus" } }`, true},
	{"unknown order", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"Z-1"}}}`, true},
	{"schema error", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":1024}}}`, true},
	{"no arguments", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"searchKnowledge"}}`, true},
	{"html and unicode in text", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"createTicket","arguments":{"subject":"<b>包裹</b> & \u2028 \"引号\"","description":"x < y > z & w"}}}`, true},
	{"search", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"searchKnowledge","arguments":{"query":"出差住宿标准"}}}`, true},
	{"escaped name", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"getOrder\u0053tatus","arguments":{"orderId":"A-1024"}}}`, true},
	{"non-ASCII unknown name", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"订单","arguments":{}}}`, false},
	{"unknown tool", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, false},
	{"meta", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"},"_meta":{"progressToken":"p1"}}}`, false},
	{"null arguments", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"getOrderStatus","arguments":null}}`, false},
	{"array arguments", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"getOrderStatus","arguments":[1]}}`, false},
	{"name in another case", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"Name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`, false},
	{"batch of one", `[{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}]`, false},
}

// TestDirectCallsMatchSDK sends every case to a server with the direct
// path and to one with it turned off (Options.NoDirectCalls), and requires the same bytes back (ticket
// numbers and times normalised), and the direct path to have taken
// exactly the cases it should.
func TestDirectCallsMatchSDK(t *testing.T) {
	for _, tc := range directCases {
		t.Run(tc.name, func(t *testing.T) {
			onBothPaths(t, tc.direct, func(direct bool) (string, *mcpserver.Server) {
				r, d := directSession(t, newDomain(t).options(), direct)
				r.handshake()
				r.send(tc.line)
				raw := r.receive()
				for _, n := range normalizers {
					raw = n.re.ReplaceAll(raw, []byte(n.with))
				}
				answer := string(raw)
				return answer, d
			})
		})
	}
}

// TestDirectCallsSameSession checks that both paths see one session: a
// ticket created on the direct path is found again, by the idempotency
// rule of one session, when the same request goes through the SDK (the
// _meta sends it there).
func TestDirectCallsSameSession(t *testing.T) {
	r, d := directSession(t, newDomain(t).options(), true)
	r.handshake()
	args := `{"subject":"包裹破损","description":"外箱压坏"}`
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"createTicket","arguments":` + args + `}}`)
	first := ticketOf(t, r.receive())
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"createTicket","arguments":` + args + `,"_meta":{"progressToken":1}}}`)
	second := ticketOf(t, r.receive())
	if d.DirectTaken() != 1 {
		t.Fatalf("direct path answered %d calls, want 1 (the second goes to the SDK)", d.DirectTaken())
	}
	if first == "" || first != second {
		t.Fatalf("the two paths created tickets %q and %q; the same session should get the same ticket", first, second)
	}
}

func ticketOf(t *testing.T, line []byte) string {
	t.Helper()
	var resp struct {
		Result struct {
			StructuredContent struct {
				TicketID string `json:"ticketId"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return resp.Result.StructuredContent.TicketID
}

// slowTool waits for its context or for release, and reports which.
func slowTool(started chan<- struct{}, release <-chan struct{}, sawCancel *atomic.Bool) *agent.Tool {
	return &agent.Tool{Name: "slow", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				sawCancel.Store(true)
				return nil, ctx.Err()
			case <-release:
				return "done", nil
			}
		}}
}

// TestDirectCallsRequiredTask: a tool that runs only as a task, called
// without one, is refused on the SDK's path (-32021); the direct path
// leaves it there instead of running it.
func TestDirectCallsRequiredTask(t *testing.T) {
	jobs := &fakeJobs{task: mcpserver.Task{ID: "t1", Created: time.Unix(1e9, 0), Updated: time.Unix(1e9, 0)}}
	var got [2]string
	for i, direct := range []bool{false, true} {
		opts := &mcpserver.Options{Version: "test", Tasks: jobs, Tools: []*agent.Tool{{
			Name: "job", Description: "a job", InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
		}}}
		r, d := directSession(t, opts, direct)
		r.handshake()
		r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job","arguments":{}}}`)
		got[i] = string(r.receive())
		if n := d.DirectTaken(); n != 0 {
			t.Errorf("direct path (on: %v) answered %d calls, want 0", direct, n)
		}
	}
	if got[0] != got[1] || !strings.Contains(got[0], `"code":-32021`) {
		t.Fatalf("answers:\nsdk    %s\ndirect %s", got[0], got[1])
	}
}

// TestDirectCallsCancel checks that notifications/cancelled reaches a call
// on the direct path: its context ends, and the session goes on.
func TestDirectCallsCancel(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	var sawCancel atomic.Bool
	var calls atomic.Int32
	opts := &mcpserver.Options{Version: "test", Tools: append(testTools(&calls), slowTool(started, release, &sawCancel))}
	r, d := directSession(t, opts, true)
	r.handshake()
	r.send(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-started
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user"}}`)
	line := string(r.receive())
	if !sawCancel.Load() || !strings.Contains(line, `"isError":true`) || !strings.Contains(line, "context canceled") {
		t.Fatalf("cancelled direct call: tool saw cancel=%v, answer %s", sawCancel.Load(), line)
	}
	close(release)
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-started
	if line := string(r.receive()); !strings.Contains(line, `"text":"done"`) {
		t.Fatalf("call after a cancelled one: %s", line)
	}
	if d.DirectTaken() != 2 {
		t.Fatalf("direct path answered %d calls, want 2", d.DirectTaken())
	}
}

// TestDirectCallsPanic checks that a panicking tool on the direct path
// gets recoverMiddleware's answer, and the session goes on.
func TestDirectCallsPanic(t *testing.T) {
	var calls atomic.Int32
	opts := &mcpserver.Options{Version: "test", Tools: testTools(&calls)}
	var got [2]string
	for i, direct := range []bool{false, true} {
		r, _ := directSession(t, opts, direct)
		r.handshake()
		r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"boom","arguments":{}}}`)
		got[i] = string(r.receive())
		r.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if line := string(r.receive()); !strings.Contains(line, `"id":2,"result":{}`) {
			t.Fatalf("ping after a panic: %s", line)
		}
	}
	if calls.Load() != 2 || !strings.Contains(got[1], "boom failed with an internal error") {
		t.Fatalf("calls=%d, direct answer %s", calls.Load(), got[1])
	}
	if got[0] != got[1] {
		t.Fatalf("panic answers differ:\nsdk    %s\ndirect %s", got[0], got[1])
	}
}

// TestDirectCallsBeforeInitialize checks that the direct path stays shut
// until initialize has been answered: the SDK's rule applies.
func TestDirectCallsBeforeInitialize(t *testing.T) {
	r, d := directSession(t, newDomain(t).options(), true)
	r.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`)
	line := string(r.receive())
	if !strings.Contains(line, `"error"`) || d.DirectTaken() != 0 {
		t.Fatalf("tools/call before initialize: want the SDK's error, got %s (direct: %d)", line, d.DirectTaken())
	}
}

// TestDirectCallsAnsweredBeforeEOF writes a slow call and closes the
// input at once: the answer must still come before the session ends.
func TestDirectCallsAnsweredBeforeEOF(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	var sawCancel atomic.Bool
	opts := &mcpserver.Options{Version: "test", Tools: []*agent.Tool{slowTool(started, release, &sawCancel)}}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	d := mcpserver.New(opts)
	ss, err := d.Connect(context.Background(), d.NewIOTransport(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(outR)
	io.WriteString(inW, mcpserver.InitializeLine+"\n")
	out.ReadBytes('\n')
	io.WriteString(inW, mcpserver.InitializedLine+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	<-started
	inW.Close()
	time.AfterFunc(50*time.Millisecond, func() { close(release) })
	line, err := out.ReadBytes('\n')
	if err != nil || !strings.Contains(string(line), `"text":"done"`) || d.DirectTaken() != 1 {
		t.Fatalf("answer after EOF: %q, %v (direct: %d)", line, err, d.DirectTaken())
	}
	if err := ss.Wait(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("session ended with %v", err)
	}
	outR.Close()
}

// BenchmarkToolsCallInMemoryDirect is a getOrderStatus tools/call in
// memory, in one process, as `agentapp serve` answers it: mcpserver's
// transport with the direct path over io.Pipe, spoken to by a client
// that only frames lines. It is the server's cost per call, without a
// client library's; BenchmarkToolsCallGetOrderStatus adds the SDK's
// client and in-memory transport.
func BenchmarkToolsCallInMemoryDirect(b *testing.B) {
	benchInMemoryRaw(b, true)
}

// BenchmarkToolsCallInMemorySDKPath is the same call through the SDK's
// request path (no direct path).
func BenchmarkToolsCallInMemorySDKPath(b *testing.B) {
	benchInMemoryRaw(b, false)
}

func benchInMemoryRaw(b *testing.B, direct bool) {
	benchInMemoryRawCalls(b, direct, false)
}

// benchInMemoryRawCalls is benchInMemoryRaw at 2025-06-18 (initialize,
// calls without _meta) or, with next, at 2026-07-28 (server/discover,
// calls with the _meta the SDK's client sends).
func benchInMemoryRawCalls(b *testing.B, direct, next bool) {
	opts := newDomain(b).options()
	d := mcpserver.New(opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var tr mcp.Transport = &mcpserver.IOTransport{Reader: inR, Writer: outW}
	if direct {
		tr = d.NewIOTransport(inR, outW)
	}
	ss, err := d.Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		inW.Close()
		ss.Wait()
		outR.Close()
	}()
	out := bufio.NewReader(outR)
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}` + "\n"
	if next {
		io.WriteString(inW, discoverLine+"\n")
		out.ReadBytes('\n')
		call = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"},` +
			`"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"agentapp","version":"dev"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n"
	} else {
		io.WriteString(inW, mcpserver.InitializeLine+"\n")
		out.ReadBytes('\n')
		io.WriteString(inW, mcpserver.InitializedLine+"\n")
	}
	// Each call has an id of its own, as MCP requires within a session: a
	// reused id may be refused while its first request is being answered.
	var req []byte
	id := 0
	b.ReportAllocs()
	for b.Loop() {
		id++
		req = fmt.Appendf(req[:0], call, id)
		if _, err := inW.Write(req); err != nil {
			b.Fatal(err)
		}
		line, err := out.ReadSlice('\n')
		if err != nil || !bytes.Contains(line, []byte(`"structuredContent"`)) {
			b.Fatalf("%q, %v", line, err)
		}
	}
	if direct && d.DirectTaken() == 0 {
		b.Fatal("the direct path answered nothing")
	}
}

// TestDirectPathStepsAsideForMiddleware: middleware must see every request,
// so a server with receiving middleware (in its options, or added to a
// session already connected) answers tools/call through the SDK only.
func TestDirectPathStepsAsideForMiddleware(t *testing.T) {
	var seen atomic.Int32
	count := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				seen.Add(1)
			}
			return next(ctx, method, req)
		}
	}
	call := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`

	opts := newDomain(t).options()
	opts.Middleware = []mcp.Middleware{count}
	r, d := directSession(t, opts, true)
	r.handshake()
	r.send(fmt.Sprintf(call, 1))
	if line := r.receive(); !strings.Contains(string(line), "已发货") || seen.Load() != 1 || d.DirectTaken() != 0 {
		t.Fatalf("with Options.Middleware: %s; middleware saw %d calls, direct path took %d; want 1 and 0", line, seen.Load(), d.DirectTaken())
	}

	seen.Store(0)
	r, d = directSession(t, newDomain(t).options(), true)
	r.handshake()
	r.send(fmt.Sprintf(call, 1))
	r.receive()
	if d.DirectTaken() != 1 {
		t.Fatalf("without middleware the direct path took %d calls, want 1", d.DirectTaken())
	}
	d.AddReceivingMiddleware(count)
	r.send(fmt.Sprintf(call, 2))
	if line := r.receive(); !strings.Contains(string(line), "已发货") || seen.Load() != 1 || d.DirectTaken() != 1 {
		t.Fatalf("middleware added while connected: %s; middleware saw %d calls, direct path took %d in all; want 1 and 1", line, seen.Load(), d.DirectTaken())
	}
}

// TestDirectCallsPipelinedMatchSDK sends the direct cases (and more calls
// of the fast one) in one write, so that answers finish together and share
// writes on the direct path, and requires the same set of answers, each a
// whole line, as from the SDK path.
func TestDirectCallsPipelinedMatchSDK(t *testing.T) {
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-%d"}}}`, 100+i, 1024+i%3))
	}
	for _, tc := range directCases {
		if !strings.HasPrefix(tc.line, "[") && !strings.Contains(tc.line, "createTicket") {
			lines = append(lines, tc.line)
		}
	}
	var got [2][]string
	for i, direct := range []bool{false, true} {
		r, d := directSession(t, newDomain(t).options(), direct)
		r.handshake()
		r.send(strings.Join(lines, "\n"))
		for range lines {
			raw := r.receive()
			if !json.Valid(raw) {
				t.Fatalf("an answer is not one JSON message: %q", raw)
			}
			got[i] = append(got[i], string(raw))
		}
		if direct && d.DirectTaken() < 40 {
			t.Errorf("direct path answered %d calls, want at least 40", d.DirectTaken())
		}
		slices.Sort(got[i])
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
}

// TestInFlightLimit: with MaxInFlight calls held open, the next call is
// refused at once with an error saying why, a cancellation still gets
// through to a held call, and once answers go out calls are taken again.
// Both paths are bounded: the held calls here are direct ones, and the
// refused call is one the SDK path would take.
func TestInFlightLimit(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int32
	hold := &agent.Tool{Name: "hold", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			started.Add(1)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return "done", nil
			}
		}}
	var calls atomic.Int32
	r, _ := directSession(t, &mcpserver.Options{Version: "test", Tools: append(testTools(&calls), hold)}, true)
	r.handshake()
	for i := range mcpserver.MaxInFlight {
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{}}}`, i+1))
	}
	deadline := time.Now().Add(30 * time.Second)
	for started.Load() < mcpserver.MaxInFlight {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d held calls started within 30 s", started.Load(), mcpserver.MaxInFlight)
		}
		time.Sleep(time.Millisecond)
	}
	r.send(`{"jsonrpc":"2.0","id":"over","method":"tools/list"}`)
	if line := string(r.receive()); !strings.Contains(line, `"id":"over"`) || !strings.Contains(line, `"code":-32000`) ||
		!strings.Contains(line, "requests are already in flight") {
		t.Fatalf("the call over the limit: %s", line)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	if line := string(r.receive()); !strings.Contains(line, `"id":1,`) || !strings.Contains(line, "context canceled") {
		t.Fatalf("the cancelled held call: %s", line)
	}
	close(release)
	for range mcpserver.MaxInFlight - 1 {
		if line := string(r.receive()); !strings.Contains(line, `"text":"done"`) {
			t.Fatalf("a held call: %s", line)
		}
	}
	r.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
	if line := string(r.receive()); !strings.Contains(line, `"id":"after"`) || !strings.Contains(line, `"tools"`) {
		t.Fatalf("a call after the held ones were answered: %s", line)
	}
}

// onBothPaths runs exchange with the direct path off, then on, and
// requires the direct path to have answered exactly when it should (once,
// if taken) and the two answers to be the same. It returns them.
func onBothPaths[A any](t *testing.T, taken bool, exchange func(direct bool) (A, *mcpserver.Server)) [2]A {
	t.Helper()
	var got [2]A
	for i, direct := range []bool{false, true} {
		var srv *mcpserver.Server
		got[i], srv = exchange(direct)
		want := int64(0)
		if direct && taken {
			want = 1
		}
		if n := srv.DirectTaken(); n != want {
			t.Errorf("direct path (on: %v) answered %d calls, want %d", direct, n, want)
		}
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
	return got
}
