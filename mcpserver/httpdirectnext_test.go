package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
)

// nextCall is a tools/call of protocol 2026-07-28: params' members, then
// _meta with meta's members (the protocol version first).
func nextCall(id, params, meta string) string {
	if meta != "" {
		meta = "," + meta
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"` + meta + `}}}`
}

// nextHeaders are the headers of a 2026-07-28 tools/call of tool.
func nextHeaders(tool string, more map[string]string) map[string]string {
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
	for k, v := range more {
		h[k] = v
	}
	return h
}

// httpDirectNextCases are 2026-07-28 requests: those the direct path
// takes, and those whose _meta, headers or shape it leaves to the SDK.
func httpDirectNextCases() []httpCase {
	const (
		caps  = `"io.modelcontextprotocol/clientCapabilities":{}`
		info  = `"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
		order = `"name":"getOrderStatus","arguments":{"orderId":"A-1024"}`
	)
	std := caps + "," + info
	h := nextHeaders("getOrderStatus", nil)
	return []httpCase{
		{"plain call", nextCall("1", order, std), h, true},
		{"string id", nextCall(`"x"`, order, std), h, true},
		{"no client info", nextCall("2", order, caps), h, true},
		{"capabilities declared", nextCall("3", order, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{"listChanged":true}},`+info), h, true},
		{"tasks extension, a tool that is no task", nextCall("4", order, `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},`+info), h, true},
		{"unknown order", nextCall("5", `"name":"getOrderStatus","arguments":{"orderId":"Z-9"}`, std), h, true},
		{"argument error", nextCall("6", `"name":"getOrderStatus","arguments":{}`, std), h, true},
		{"no arguments", nextCall("7", `"name":"plain"`, std), nextHeaders("plain", nil), true},
		{"tool error", nextCall("8", `"name":"fail","arguments":{}`, std), nextHeaders("fail", nil), true},
		{"panicking tool", nextCall("9", `"name":"boom","arguments":{}`, std), nextHeaders("boom", nil), true},
		{"content type with charset", nextCall("10", order, std), nextHeaders("getOrderStatus", map[string]string{"Content-Type": "application/json; charset=utf-8"}), true},

		{"no capabilities", nextCall("20", order, info), h, false},
		{"capabilities not an object", nextCall("21", order, `"io.modelcontextprotocol/clientCapabilities":5`), h, false},
		{"capability of the wrong type", nextCall("22", order, `"io.modelcontextprotocol/clientCapabilities":{"elicitation":5}`), h, false},
		{"client info of the wrong type", nextCall("23", order, caps+`,"io.modelcontextprotocol/clientInfo":{"name":5}`), h, false},
		{"progress token", nextCall("24", order, std+`,"progressToken":1`), h, false},
		{"log level", nextCall("25", order, std+`,"io.modelcontextprotocol/logLevel":"debug"`), h, false},
		{"session name", nextCall("26", order, std+`,"agentapp/session":"c1"`), h, false},
		{"meta version differs", strings.Replace(nextCall("27", order, std), `"2026-07-28"`, `"2026-08-01"`, 1), h, false},
		{"header version differs", nextCall("28", order, std), nextHeaders("getOrderStatus", map[string]string{"Mcp-Protocol-Version": "2026-08-01"}), false},
		{"no version header", nextCall("29", order, std), nextHeaders("getOrderStatus", map[string]string{"Mcp-Protocol-Version": ""}), false},
		{"no method header", nextCall("30", order, std), nextHeaders("getOrderStatus", map[string]string{"Mcp-Method": ""}), false},
		{"method header differs", nextCall("31", order, std), nextHeaders("getOrderStatus", map[string]string{"Mcp-Method": "tools/list"}), false},
		{"no name header", nextCall("32", order, std), nextHeaders("", nil), false},
		{"name header differs", nextCall("33", order, std), nextHeaders("plain", nil), false},
		{"unknown tool", nextCall("34", `"name":"nope","arguments":{}`, std), nextHeaders("nope", nil), false},
		{"legacy task param", nextCall("35", order+`,"task":{"ttl":60000}`, std), h, false},
		{"accept json only", nextCall("36", order, std), nextHeaders("getOrderStatus", map[string]string{"Accept": "application/json"}), false},
		{"last event id", nextCall("37", order, std), nextHeaders("getOrderStatus", map[string]string{"Last-Event-ID": "x_1"}), false},
		{"arguments not an object", nextCall("38", `"name":"getOrderStatus","arguments":[1]`, std), h, false},
		{"input responses", nextCall("39", order+`,"inputResponses":{}`, std), h, false},
		{"batch", "[" + nextCall("40", order, std) + "]", h, false},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, h, false},
	}
}

// TestHTTPDirectNextMatchesSDK sends every 2026-07-28 case to a server
// with the direct path and to one without (no session: that generation
// has none) and requires the same status, headers (but Date) and body,
// and the direct path to have taken exactly the cases it should.
func TestHTTPDirectNextMatchesSDK(t *testing.T) {
	var calls atomic.Int32
	for _, tc := range httpDirectNextCases() {
		t.Run(tc.name, func(t *testing.T) {
			got := onBothPaths(t, tc.direct, func(direct bool) (httpAnswer, *mcpserver.Server) {
				opts := newDomain(t).options()
				opts.Tools = append(opts.Tools, testTools(&calls)...)
				p := newHTTPPeer(t, opts, direct, nil)
				answer := p.post(context.Background(), "", tc.body, tc.headers)
				return answer, p.srv
			})
			if got[0].Status == 0 {
				t.Fatal("no answer")
			}
			// Every result of the generation says what it is, a
			// panicking tool's too.
			if tc.direct && !strings.Contains(got[0].Body, `"resultType":"complete"}}`) {
				t.Errorf("the SDK's path answered without resultType: %s", got[0].Body)
			}
		})
	}
}

// TestHTTPDirectNextTasks: under the tasks extension, a task tool's call
// from a caller with a token becomes a task on the SDK's path, and a tool
// that runs only as a task is refused there; a task tool called without
// the extension, or without a token (no caller to come back), runs as a
// plain call, on the direct path; both paths answer alike.
func TestHTTPDirectNextTasks(t *testing.T) {
	const ext = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	const none = `"io.modelcontextprotocol/clientCapabilities":{}`
	jobs := &fakeJobs{task: mcpserver.Task{ID: "t1", Created: time.Unix(1e9, 0), Updated: time.Unix(1e9, 0)}}
	for _, tc := range []struct {
		name        string
		required    bool
		meta, token string
		direct      bool
	}{
		{"task for a caller", false, ext, "Bearer tok", false},
		{"no caller", false, ext, "", true},
		{"no extension", false, none, "Bearer tok", true},
		{"required, no extension", true, none, "Bearer tok", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onBothPaths(t, tc.direct, func(direct bool) (httpAnswer, *mcpserver.Server) {
				opts := &mcpserver.Options{Version: "test", Tools: []*agent.Tool{{
					Name: "job", Description: "a job", InputSchema: json.RawMessage(`{"type":"object"}`),
					Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
				}}}
				if tc.required {
					opts.Tasks = jobs
				} else {
					opts.Tasks = struct{ mcpserver.TaskBackend }{jobs} // optional: no RequiredTaskTools
				}
				p := newHTTPPeer(t, opts, direct, nil)
				answer := p.post(context.Background(), "", nextCall("1", `"name":"job","arguments":{}`, tc.meta), nextHeaders("job", map[string]string{"Authorization": tc.token}))
				return answer, p.srv
			})
		})
	}
}
