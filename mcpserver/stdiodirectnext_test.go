package mcpserver_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
)

// discoverLine is the server/discover with which a client of 2026-07-28
// opens a stdio connection.
const discoverLine = `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`

// discover sends discoverLine and requires a result.
func (r *rawSession) discover() {
	r.t.Helper()
	r.send(discoverLine)
	if line := string(r.receive()); !strings.Contains(line, `"result":{`) || !strings.Contains(line, `"2026-07-28"`) {
		r.t.Fatalf("server/discover: %s", line)
	}
}

// stdioDirectNextCases are 2026-07-28 lines on a discovered connection:
// those the direct path takes, and those it leaves to the SDK.
func stdioDirectNextCases() []struct {
	name, line string
	direct     bool
} {
	const (
		caps  = `"io.modelcontextprotocol/clientCapabilities":{}`
		info  = `"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
		order = `"name":"getOrderStatus","arguments":{"orderId":"A-1024"}`
	)
	std := caps + "," + info
	return []struct {
		name, line string
		direct     bool
	}{
		{"plain call", nextCall("1", order, std), true},
		{"string id", nextCall(`"x"`, order, std), true},
		{"no client info", nextCall("2", order, caps), true},
		{"capabilities declared", nextCall("3", order, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{"listChanged":true}},`+info), true},
		{"tasks extension, a tool that is no task", nextCall("4", order, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},`+info), true},
		{"unknown order", nextCall("5", `"name":"getOrderStatus","arguments":{"orderId":"Z-9"}`, std), true},
		{"missing argument", nextCall("6", `"name":"getOrderStatus","arguments":{}`, std), true},
		{"argument of the wrong type", nextCall("7", `"name":"getOrderStatus","arguments":{"orderId":1024}`, std), true},
		{"unknown argument", nextCall("8", `"name":"echo","arguments":{"n":1,"m":2}`, std), true},
		{"integer argument as a string", nextCall("9", `"name":"echo","arguments":{"n":"1"}`, std), true},
		{"no arguments", nextCall("10", `"name":"plain"`, std), true},
		{"html and unicode in text", nextCall("11", `"name":"createTicket","arguments":{"subject":"<b>包裹</b> & \u2028 \"引号\"","description":"x < y > z & w"}`, std), true},
		{"escaped name", nextCall("12", `"name":"getOrder\u0053tatus","arguments":{"orderId":"A-1024"}`, std), true},
		{"tool error", nextCall("13", `"name":"fail","arguments":{}`, std), true},
		{"panicking tool", nextCall("14", `"name":"boom","arguments":{}`, std), true},
		{"meta first", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + std + `},` + order + `}}`, true},

		{"unknown tool", nextCall("20", `"name":"nope","arguments":{}`, std), false},
		{"no capabilities", nextCall("21", order, info), false},
		{"capabilities not an object", nextCall("22", order, `"io.modelcontextprotocol/clientCapabilities":5`), false},
		{"capability of the wrong type", nextCall("23", order, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":5}`), false},
		{"client info of the wrong type", nextCall("24", order, caps+`,"io.modelcontextprotocol/clientInfo":{"name":5}`), false},
		{"client info not an object", nextCall("25", order, caps+`,"io.modelcontextprotocol/clientInfo":"t"`), false},
		{"unknown meta key", nextCall("26", order, std+`,"x/y":1`), false},
		{"progress token", nextCall("27", order, std+`,"progressToken":1`), false},
		{"log level", nextCall("16", order, std+`,"io.modelcontextprotocol/logLevel":"debug"`), true},
		{"unknown log level", nextCall("17", order, std+`,"io.modelcontextprotocol/logLevel":"loud"`), true},
		{"log level not a string", nextCall("28", order, std+`,"io.modelcontextprotocol/logLevel":5`), false},
		{"trace context", nextCall("29", order, std+`,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`), false},
		{"later version", strings.Replace(nextCall("30", order, std), `"2026-07-28"`, `"2026-08-01"`, 1), false},
		{"earlier version", strings.Replace(nextCall("31", order, std), `"2026-07-28"`, `"2025-11-25"`, 1), false},
		{"version not a string", strings.Replace(nextCall("32", order, std), `"2026-07-28"`, `20260728`, 1), false},
		{"no version", `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{` + order + `,"_meta":{` + std + `}}}`, false},
		{"no meta", `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":{` + order + `}}`, false},
		{"meta not an object", `{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{` + order + `,"_meta":[]}}`, false},
		{"legacy task param", nextCall("36", order+`,"task":{"ttl":60000}`, std), false},
		{"input responses", nextCall("37", order+`,"inputResponses":{}`, std), false},
		{"arguments not an object", nextCall("38", `"name":"getOrderStatus","arguments":[1]`, std), false},
		{"null arguments", nextCall("39", `"name":"getOrderStatus","arguments":null`, std), false},
		{"batch of one", "[" + nextCall("40", order, std) + "]", false},
	}
}

// TestStdioDirectNextMatchesSDK sends every 2026-07-28 case, after
// server/discover, to a server with the direct path and to one without,
// and requires the same bytes back (ticket numbers and times normalised),
// and the direct path to have taken exactly the cases it should.
func TestStdioDirectNextMatchesSDK(t *testing.T) {
	var calls atomic.Int32
	for _, tc := range stdioDirectNextCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := onBothPaths(t, tc.direct, func(direct bool) (string, *mcpserver.Server) {
				opts := newDomain(t).options()
				opts.Tools = append(opts.Tools, testTools(&calls)...)
				r, d := directSession(t, opts, direct)
				r.discover()
				r.send(tc.line)
				raw := r.receive()
				for _, n := range normalizers {
					raw = n.re.ReplaceAll(raw, []byte(n.with))
				}
				answer := string(raw)
				return answer, d
			})
			if tc.direct && !strings.Contains(got[0], `"_meta":{"io.modelcontextprotocol/serverInfo":`) ||
				tc.direct && !strings.HasSuffix(strings.TrimSpace(got[0]), `"resultType":"complete"}}`) {
				t.Errorf("the SDK's path answered without serverInfo or resultType: %s", got[0])
			}
		})
	}
}

// TestStdioDirectNextOneSession sends every case twice in a row on one
// connection, as a client that repeats its _meta does (the direct path
// keeps the last _meta that passed, checkNextMeta), and requires the same
// bytes as the SDK's path and the direct path to have taken both of each
// case it takes, and nothing else.
func TestStdioDirectNextOneSession(t *testing.T) {
	var calls atomic.Int32
	cases := stdioDirectNextCases()
	var got [2][]string
	for i, direct := range []bool{false, true} {
		opts := newDomain(t).options()
		opts.Tools = append(opts.Tools, testTools(&calls)...)
		r, d := directSession(t, opts, direct)
		r.discover()
		want, id := int64(0), 100
		for _, tc := range cases {
			for range 2 {
				// Each request its own id: one answered a moment ago may
				// still count as being answered.
				id++
				r.send(firstID.ReplaceAllString(tc.line, `"id":`+strconv.Itoa(id)))
				raw := r.receive()
				for _, n := range normalizers {
					raw = n.re.ReplaceAll(raw, []byte(n.with))
				}
				got[i] = append(got[i], string(raw))
				if direct && tc.direct {
					want++
				}
			}
		}
		if n := d.DirectTaken(); n != want {
			t.Errorf("direct path (on: %v) answered %d calls, want %d", direct, n, want)
		}
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
}

// firstID matches the id of a case's line (each has one).
var firstID = regexp.MustCompile(`"id":("[^"]*"|\d+)`)

// TestStdioDirectNextOpens checks when the direct path of 2026-07-28
// opens: not before server/discover has been answered (the SDK records
// the session's parameters from the first such request), not after an
// initialize (the connection speaks the older protocol), and a failed
// server/discover opens nothing; once open, calls without _meta still go
// to the SDK.
func TestStdioDirectNextOpens(t *testing.T) {
	call := func(id string) string {
		return nextCall(id, `"name":"getOrderStatus","arguments":{"orderId":"A-1024"}`,
			`"io.modelcontextprotocol/clientCapabilities":{}`)
	}
	t.Run("no discover", func(t *testing.T) {
		r, d := directSession(t, newDomain(t).options(), true)
		r.send(call("1"))
		r.send(call("2"))
		for range 2 {
			if line := string(r.receive()); !strings.Contains(line, `"resultType":"complete"`) {
				t.Fatalf("call: %s", line)
			}
		}
		if n := d.DirectTaken(); n != 0 {
			t.Fatalf("direct path answered %d calls before server/discover, want 0", n)
		}
	})
	t.Run("initialized", func(t *testing.T) {
		r, d := directSession(t, newDomain(t).options(), true)
		r.handshake()
		r.discover()
		r.send(call("1"))
		if line := string(r.receive()); !strings.Contains(line, `"resultType":"complete"`) {
			t.Fatalf("call: %s", line)
		}
		if n := d.DirectTaken(); n != 0 {
			t.Fatalf("direct path answered %d calls of 2026-07-28 after initialize, want 0", n)
		}
	})
	t.Run("failed discover", func(t *testing.T) {
		r, d := directSession(t, newDomain(t).options(), true)
		r.send(strings.Replace(discoverLine, `"io.modelcontextprotocol/clientCapabilities":{},`, "", 1))
		if line := string(r.receive()); !strings.Contains(line, `"error"`) {
			t.Fatalf("discover without capabilities: %s", line)
		}
		r.send(call("1"))
		r.receive()
		if n := d.DirectTaken(); n != 0 {
			t.Fatalf("direct path answered %d calls after a failed server/discover, want 0", n)
		}
	})
	t.Run("discovered", func(t *testing.T) {
		r, d := directSession(t, newDomain(t).options(), true)
		r.discover()
		r.send(call("1"))
		r.receive()
		r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`)
		// The SDK's answer (resultType without serverInfo: the session
		// speaks 2026-07-28, the request does not say so) is left to it.
		if line := string(r.receive()); !strings.Contains(line, `"result":{`) {
			t.Fatalf("call without _meta: %s", line)
		}
		if n := d.DirectTaken(); n != 1 {
			t.Fatalf("direct path answered %d calls, want 1 (the one of 2026-07-28)", n)
		}
	})
}

// TestStdioDirectNextSameSession checks that both paths see one session
// at 2026-07-28 too: a ticket created on the direct path is found again,
// by the idempotency rule of one session, when the same request goes
// through the SDK (a progress token sends it there).
func TestStdioDirectNextSameSession(t *testing.T) {
	r, d := directSession(t, newDomain(t).options(), true)
	r.discover()
	const caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	args := `"name":"createTicket","arguments":{"subject":"包裹破损","description":"外箱压坏"}`
	r.send(nextCall("1", args, caps))
	first := ticketOf(t, r.receive())
	r.send(nextCall("2", args, caps+`,"progressToken":1`))
	second := ticketOf(t, r.receive())
	if d.DirectTaken() != 1 {
		t.Fatalf("direct path answered %d calls, want 1 (the second goes to the SDK)", d.DirectTaken())
	}
	if first == "" || first != second {
		t.Fatalf("the two paths created tickets %q and %q; the same session should get the same ticket", first, second)
	}
}

// TestStdioDirectNextCancel checks that notifications/cancelled reaches a
// 2026-07-28 call on the direct path: its context ends, its answer is the
// SDK's result of that generation, and the connection goes on.
func TestStdioDirectNextCancel(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	var sawCancel atomic.Bool
	var calls atomic.Int32
	opts := &mcpserver.Options{Version: "test", Tools: append(testTools(&calls), slowTool(started, release, &sawCancel))}
	r, d := directSession(t, opts, true)
	r.discover()
	const caps = `"io.modelcontextprotocol/clientCapabilities":{}`
	r.send(nextCall(`"s1"`, `"name":"slow","arguments":{}`, caps))
	<-started
	r.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user"}}`)
	line := string(r.receive())
	if !sawCancel.Load() || !strings.Contains(line, `"isError":true`) || !strings.Contains(line, "context canceled") ||
		!strings.HasSuffix(strings.TrimSpace(line), `"resultType":"complete"}}`) {
		t.Fatalf("cancelled direct call: tool saw cancel=%v, answer %s", sawCancel.Load(), line)
	}
	close(release)
	r.send(nextCall("2", `"name":"slow","arguments":{}`, caps))
	<-started
	if line := string(r.receive()); !strings.Contains(line, `"text":"done"`) {
		t.Fatalf("call after a cancelled one: %s", line)
	}
	if d.DirectTaken() != 2 {
		t.Fatalf("direct path answered %d calls, want 2", d.DirectTaken())
	}
}

// TestStdioDirectNextTasks: on a line connection the caller is the
// session, so under the tasks extension a task tool's call becomes a task
// on the SDK's path and a tool that runs only as a task is refused there;
// a task tool called without the extension runs on the direct path; both
// paths answer alike.
func TestStdioDirectNextTasks(t *testing.T) {
	const ext = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	const none = `"io.modelcontextprotocol/clientCapabilities":{}`
	jobs := &fakeJobs{task: mcpserver.Task{ID: "t1", Created: time.Unix(1e9, 0), Updated: time.Unix(1e9, 0)}}
	for _, tc := range []struct {
		name     string
		required bool
		meta     string
		direct   bool
	}{
		{"task for the session", false, ext, false},
		{"no extension", false, none, true},
		{"required, no extension", true, none, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onBothPaths(t, tc.direct, func(direct bool) (string, *mcpserver.Server) {
				opts := &mcpserver.Options{Version: "test", Tools: []*agent.Tool{{
					Name: "job", Description: "a job", InputSchema: json.RawMessage(`{"type":"object"}`),
					Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
				}}}
				if tc.required {
					opts.Tasks = jobs
				} else {
					opts.Tasks = struct{ mcpserver.TaskBackend }{jobs} // optional: no RequiredTaskTools
				}
				r, d := directSession(t, opts, direct)
				r.discover()
				r.send(nextCall("1", `"name":"job","arguments":{}`, tc.meta))
				answer := string(r.receive())
				return answer, d
			})
		})
	}
}

// BenchmarkToolsCallInMemoryDirectNext is BenchmarkToolsCallInMemoryDirect
// at 2026-07-28: after server/discover, each call with the _meta the SDK's
// client puts in it.
func BenchmarkToolsCallInMemoryDirectNext(b *testing.B) {
	benchInMemoryRawCalls(b, true, true)
}

// BenchmarkToolsCallInMemorySDKPathNext is the same call through the
// SDK's request path (no direct path).
func BenchmarkToolsCallInMemorySDKPathNext(b *testing.B) {
	benchInMemoryRawCalls(b, false, true)
}
