package stdiofast

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The session's _meta is recorded from the SDK's first request after the
// handshake (not from server/discover, not from a request without it), and
// a call's params carry it: byte for byte what encoding/json makes of the
// same params with the keys in their _meta, with the call's own keys kept
// (but the session's log level).
func TestSessionMeta(t *testing.T) {
	c := &Conn{}
	p := &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"a": "<b>"}}
	if _, err := c.withSessionMeta(p); !errors.Is(err, ErrNeedsSDK) {
		t.Fatalf("before recording: %v", err)
	}
	id, _ := jsonrpc.MakeID(float64(1))
	c.recordMeta(&jsonrpc.Request{ID: id, Method: "server/discover", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}`)})
	c.recordMeta(&jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(`{}`)})
	if c.HasSessionMeta() {
		t.Fatal("recorded from server/discover or a request without _meta")
	}
	session := `{"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/clientInfo":{"name":"agentapp","version":"1"},"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	c.recordMeta(&jsonrpc.Request{ID: id, Method: "tools/list", Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"agentapp","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/logLevel":"info","traceparent":"00-x"}}`)})
	if !c.HasSessionMeta() {
		t.Fatal("not recorded")
	}
	want := func(meta map[string]any) []byte {
		var m map[string]any
		_ = json.Unmarshal([]byte(session), &m)
		for k, v := range meta {
			m[k] = v
		}
		b, _ := marshalParams(&mcp.CallToolParams{Meta: m, Name: p.Name, Arguments: p.Arguments})
		return b
	}
	got, err := c.withSessionMeta(p)
	if err != nil || !bytes.Equal(got, want(nil)) {
		t.Errorf("no _meta of its own:\n%s, %v\nwant\n%s", got, err, want(nil))
	}
	own := &mcp.CallToolParams{Meta: map[string]any{"progressToken": "p1", "io.modelcontextprotocol/logLevel": "debug", "io.modelcontextprotocol/protocolVersion": "mine"}, Name: p.Name, Arguments: p.Arguments}
	got, err = c.withSessionMeta(own)
	w := want(map[string]any{"progressToken": "p1", "io.modelcontextprotocol/protocolVersion": "mine"})
	if err != nil || !bytes.Equal(got, w) {
		t.Errorf("with _meta of its own:\n%s, %v\nwant\n%s", got, err, w)
	}
}
