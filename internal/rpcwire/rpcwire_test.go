package rpcwire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// messages are lines both sides of MCP send, and some they should not.
var messages = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}],"structuredContent":{"a":1}}}`,
	`{"jsonrpc":"2.0","id":"abc","result":{}}`,
	`{"id":7,"jsonrpc":"2.0","result":{"tools":[]}}`,
	`{"jsonrpc":"2.0","id":-3,"error":{"code":-32602,"message":"bad params","data":{"field":"x"}}}`,
	`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"internal"}}`,
	`{"jsonrpc":"2.0","id":9007199254740992,"result":null}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`,
	`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10}}`,
	`{"jsonrpc":"2.0","id":"r-1","method":"roots/list"}`,
	`{ "jsonrpc" : "2.0" , "id" : 5 , "result" : { "x" : "\u00e9\n" } }`,
	`{"jsonrpc":"2.0","id":6,"result":{"text":"日本語 \"quoted\" \\ back"}}`,
	`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
}

// TestDecodeMatchesSDK requires Decode to build the message the SDK's own
// decoder builds, for every line both accept.
func TestDecodeMatchesSDK(t *testing.T) {
	for _, line := range messages {
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("the SDK refuses %s: %v", line, err)
		}
		got, _, problem := Decode([]byte(line))
		if problem != "" {
			t.Fatalf("Decode(%s): %s", line, problem)
		}
		if diff := cmp.Diff(normal(t, want), normal(t, got)); diff != "" {
			t.Errorf("Decode(%s) differs from the SDK (-sdk +ours):\n%s", line, diff)
		}
	}
}

// TestDecodeRefuses lists what Decode refuses, with the reason it gives.
func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ line, problem string }{
		{`[1]`, "must be a JSON object"},
		{`{"id":1,"result":{}}`, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"1.0","id":1,"result":{}}`, `"jsonrpc" must be "2.0"`},
		{`{"jsonrpc":"2.0","result":{}}`, "needs an id"},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, "must not be null"},
		{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, "integer"},
		{`{"jsonrpc":"2.0","id":1e3,"result":{}}`, "integer"},
		{`{"jsonrpc":"2.0","id":9007199254740993,"result":{}}`, "integer"},
		{`{"jsonrpc":"2.0","id":true,"result":{}}`, "string or an integer"},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, "method must be a string"},
		{`{"jsonrpc":"2.0","id":1,"error":"boom"}`, "not a JSON-RPC error object"},
	} {
		_, _, problem := Decode([]byte(tc.line))
		if !strings.Contains(problem, tc.problem) {
			t.Errorf("Decode(%s): problem %q, want it to mention %q", tc.line, problem, tc.problem)
		}
	}
}

// FuzzDecode holds Decode to the SDK's decoder: on a JSON object both
// accept, they build the same message; Decode refuses only what the SDK
// also refuses or what it would change (ids it cannot echo exactly, a null
// request id, a wrong version tag).
func FuzzDecode(f *testing.F) {
	for _, m := range messages {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSpace(line)
		if !json.Valid(line) || len(line) == 0 || line[0] != '{' {
			return
		}
		got, _, problem := Decode(line)
		want, err := jsonrpc.DecodeMessage(line)
		if problem != "" {
			return // see TestDecodeRefuses: stricter than the SDK on ids
		}
		if err != nil {
			t.Fatalf("the SDK refuses %s (%v) but Decode took it", line, err)
		}
		if diff := cmp.Diff(normal(t, want), normal(t, got)); diff != "" {
			t.Fatalf("Decode(%s) differs from the SDK (-sdk +ours):\n%s", line, diff)
		}
	})
}

// normal turns a message into comparable values: raw JSON is compared as
// decoded JSON, since the SDK keeps its own copy of the bytes.
func normal(t *testing.T, m jsonrpc.Message) map[string]any {
	t.Helper()
	val := func(raw json.RawMessage) any {
		if raw == nil {
			return nil
		}
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("raw value %q: %v", raw, err)
		}
		return v
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		return map[string]any{"kind": "request", "id": m.ID.Raw(), "method": m.Method, "params": val(m.Params)}
	case *jsonrpc.Response:
		out := map[string]any{"kind": "response", "id": m.ID.Raw(), "result": val(m.Result)}
		if m.Error != nil {
			out["error"] = m.Error.Error()
		}
		return out
	}
	t.Fatalf("unexpected message type %T", m)
	return nil
}

// TestDecodeIDLoneSurrogates: a string id with a lone surrogate escape
// became U+FFFD, so "\ud800" was answered as "\ufffd" and "\ud800" and
// "\udc00" in one batch got the same id. Such ids are refused; a proper
// pair and an escaped backslash before "ud800" are ids like any other.
func TestDecodeIDLoneSurrogates(t *testing.T) {
	for _, raw := range []string{`"\ud800"`, `"\uDC00"`, `"a\ud800b"`, `"\ud800\u0041"`, `"\udbff\ud800"`, `"x\\\ud800"`, `"\ud83d\ude00\udc00"`} {
		if id, problem := DecodeID([]byte(raw)); !strings.Contains(problem, "lone UTF-16 surrogate") || id.IsValid() {
			t.Errorf("DecodeID(%s) = %v, %q; want it refused for its lone surrogate", raw, id.Raw(), problem)
		}
	}
	for raw, want := range map[string]string{`"\ud83d\ude00"`: "😀", `"\\ud800"`: `\ud800`, `"\u00e9\\"`: `é\`, `"plain"`: "plain"} {
		id, problem := DecodeID([]byte(raw))
		if problem != "" || id.Raw() != want {
			t.Errorf("DecodeID(%s) = %q, %q; want %q", raw, id.Raw(), problem, want)
		}
	}
}
