package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawServer builds an in-memory MCP server whose tools answer with the
// given results, so each mapping branch can be driven through the real
// protocol.
func adServer(t *testing.T, tools map[string]mcp.ToolHandler) *mcp.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	for name, h := range tools {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	return srv
}

func adFixed(res *mcp.CallToolResult) mcp.ToolHandler {
	return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil }
}

func adConnect(t *testing.T, srv *mcp.Server) *Bridge {
	t.Helper()
	b, err := ConnectInMemory(context.Background(), "mem", srv)
	if err != nil {
		t.Fatalf("ConnectInMemory: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func adTool(t *testing.T, b *Bridge, name string) *agent.Tool {
	t.Helper()
	for _, tl := range b.Tools() {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %d tools", name, len(b.Tools()))
	return nil
}

// run executes a tool and returns what the model would see.
func adExec(t *testing.T, tl *agent.Tool, args string) (string, error) {
	t.Helper()
	var raw json.RawMessage
	if args != "" {
		raw = json.RawMessage(args)
	}
	out, err := tl.Execute(context.Background(), raw)
	if err != nil {
		return "", err
	}
	s, ferr := agent.FormatOutput(out)
	if ferr != nil {
		t.Fatalf("FormatOutput: %v", ferr)
	}
	return s, nil
}

func TestAdapterResultMapping(t *testing.T) {
	size := int64(1234)
	srv := adServer(t, map[string]mcp.ToolHandler{
		// Text bytes that equal structuredContent are kept as sent (key order).
		"structuredSameText": adFixed(&mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"zeta":1,"alpha":"x"}`}},
			StructuredContent: map[string]any{"zeta": 1, "alpha": "x"},
		}),
		// Text that differs from structuredContent: the object wins.
		"structuredOtherText": adFixed(&mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "done"}},
			StructuredContent: map[string]any{"ok": true},
		}),
		"texts": adFixed(&mcp.CallToolResult{
			Content: []mcp.Content{&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"}},
		}),
		"media": adFixed(&mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "here you go"},
				&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
				&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte{1, 2, 3, 4, 5}},
				&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Size: &size},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://doc", MIMEType: "text/markdown", Text: "# Doc"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://bin", MIMEType: "application/octet-stream", Blob: []byte("abcdef")}},
			},
		}),
		"structuredArray": adFixed(&mcp.CallToolResult{
			Content:           []mcp.Content{},
			StructuredContent: []any{1, 2},
		}),
	})
	b := adConnect(t, srv)
	cases := []struct{ tool, want string }{
		{"structuredSameText", `{"zeta":1,"alpha":"x"}`},
		{"structuredOtherText", `{"ok":true}`},
		{"texts", "one\ntwo"},
		{"media", strings.Join([]string{
			"here you go",
			"[image: image/png, 3 bytes]",
			"[audio: audio/wav, 5 bytes]",
			`[resource link: file:///a.txt (name "a.txt", text/plain, 1234 bytes)]`,
			"[embedded resource: mem://doc (text/markdown, 5 bytes of text)]",
			"# Doc",
			"[embedded resource: mem://bin (application/octet-stream, 6 bytes)]",
		}, "\n")},
		{"structuredArray", `[1,2]`},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			got, err := adExec(t, adTool(t, b, c.tool), `{}`)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != c.want {
				t.Errorf("model sees\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// adFakeCaller returns a fixed result or error, for branches a real server
// cannot produce (a legacy result without the capturing connection, a
// result with nothing readable, a broken transport).
type adFakeCaller struct {
	res *mcp.CallToolResult
	err error
}

func (f adFakeCaller) CallTool(context.Context, *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return f.res, f.err
}

func TestAdapterLegacyAndUnmappable(t *testing.T) {
	desc := &mcp.Tool{Name: "old"}
	legacy := AdaptTool(adFakeCaller{res: &mcp.CallToolResult{
		Meta: mcp.Meta{stdiofast.LegacyToolResultKey: `{"b":2,"a":1}`},
	}}, "srv", desc, nil, time.Second)
	if got, err := adExec(t, legacy, `{}`); err != nil || got != `{"b":2,"a":1}` {
		t.Errorf("legacy toolResult: got %q, %v", got, err)
	}

	empty := AdaptTool(adFakeCaller{res: &mcp.CallToolResult{}}, "srv", desc, nil, time.Second)
	_, err := adExec(t, empty, `{}`)
	wantCallErr(t, err, KindUnmappable, "tool old returned nothing the model can read (content types: none; no text, structuredContent or toolResult)")

	odd := AdaptTool(adFakeCaller{res: &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.ToolUseContent{ID: "1", Name: "x"}},
	}}, "srv", desc, nil, time.Second)
	_, err = adExec(t, odd, `{}`)
	wantCallErr(t, err, KindUnmappable, "tool old returned nothing the model can read (content types: tool_use; no text, structuredContent or toolResult)")
}

func TestLiftLegacyToolResult(t *testing.T) {
	in := json.RawMessage(`{"_meta":{"k":"v"},"toolResult":{"z":[1, 2],"a":null}}`)
	out := stdiofast.LiftLegacyToolResult(in)
	var res mcp.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decoding lifted result %s: %v", out, err)
	}
	if got := res.Meta[stdiofast.LegacyToolResultKey]; got != `{"z":[1, 2],"a":null}` {
		t.Errorf("lifted toolResult = %#v", got)
	}
	if res.Meta["k"] != "v" {
		t.Errorf("existing _meta lost: %v", res.Meta)
	}
	plain := json.RawMessage(`{"content":[]}`)
	if got := stdiofast.LiftLegacyToolResult(plain); !bytes.Equal(got, plain) {
		t.Errorf("result without toolResult changed: %s", got)
	}
}

func wantCallErr(t *testing.T, err error, kind ErrorKind, msg string) {
	t.Helper()
	var ce *CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *CallError", err, err)
	}
	if ce.Kind != kind {
		t.Errorf("kind = %d, want %d (%v)", ce.Kind, kind, err)
	}
	if msg != "" && err.Error() != msg {
		t.Errorf("message\n%s\nwant\n%s", err.Error(), msg)
	}
}

func TestAdapterArguments(t *testing.T) {
	var calls atomic.Int32
	var lastArgs atomic.Value
	srv := adServer(t, map[string]mcp.ToolHandler{
		"args": func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			lastArgs.Store(string(req.Params.Arguments))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		},
	})
	tl := adTool(t, adConnect(t, srv), "args")
	for _, bad := range []struct{ args, kind string }{
		{`[1,2]`, "an array"}, {`"text"`, "a string"}, {`42`, "a number"}, {`true`, "a boolean"},
	} {
		_, err := adExec(t, tl, bad.args)
		wantCallErr(t, err, KindArguments, "tool args was not called: arguments must be a JSON object, got "+bad.kind+"; send the arguments as a JSON object")
	}
	_, err := adExec(t, tl, `{"a":`)
	wantCallErr(t, err, KindArguments, "")
	if n := calls.Load(); n != 0 {
		t.Fatalf("server was called %d times with bad arguments", n)
	}
	for _, absent := range []string{"", "null"} {
		if _, err := adExec(t, tl, absent); err != nil {
			t.Fatalf("absent arguments %q: %v", absent, err)
		}
		if got := lastArgs.Load(); got != "{}" {
			t.Errorf("absent arguments %q reached the server as %v, want {}", absent, got)
		}
	}
	if _, err := adExec(t, tl, `{"n": 1.50, "b": 1, "a": 2}`); err != nil {
		t.Fatal(err)
	}
	if got := lastArgs.Load(); got != `{"n":1.50,"b":1,"a":2}` {
		t.Errorf("arguments reached the server as %v; want the model's bytes (compacted)", got)
	}
}

func TestAdapterIsError(t *testing.T) {
	srv := adServer(t, map[string]mcp.ToolHandler{
		"bad": adFixed(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "orderId must look like A-1024"}}}),
	})
	_, err := adExec(t, adTool(t, adConnect(t, srv), "bad"), `{"orderId":"x"}`)
	wantCallErr(t, err, KindToolError, "tool bad returned an error: orderId must look like A-1024; fix the arguments and retry")
}

func TestAdapterTransportFailure(t *testing.T) {
	tl := AdaptTool(adFakeCaller{err: io.ErrUnexpectedEOF}, "remote", &mcp.Tool{Name: "t"}, nil, time.Second)
	_, err := adExec(t, tl, `{}`)
	wantCallErr(t, err, KindConnection, "tool t could not be called: unexpected EOF (connection to server remote)")
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cause not wrapped: %v", err)
	}

	// A real session whose connection is gone: the next call reconnects
	// (an in-memory server comes back like a restarted process).
	b := adConnect(t, adServer(t, map[string]mcp.ToolHandler{"x": adFixed(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "back"}}})}))
	tl = adTool(t, b, "x")
	old := b.session()
	ended := curConn(b).ended
	if err := old.Close(); err != nil {
		t.Fatalf("closing session: %v", err)
	}
	<-ended // the bridge noticed
	if got, err := adExec(t, tl, `{}`); err != nil || got != "back" {
		t.Fatalf("call after the session ended: %q, %v; want the bridge to reconnect", got, err)
	}
	if b.session() == old {
		t.Errorf("the bridge still uses the closed session")
	}

	// A call after Close.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = adExec(t, tl, `{}`)
	wantCallErr(t, err, KindConnection, "tool x could not be called: the connection to server mem was closed")
}

func TestAdapterRejected(t *testing.T) {
	b := adConnect(t, adServer(t, map[string]mcp.ToolHandler{"x": adFixed(&mcp.CallToolResult{})}))
	tl := AdaptTool(b, "mem", &mcp.Tool{Name: "nope"}, nil, time.Second)
	_, err := adExec(t, tl, `{}`)
	wantCallErr(t, err, KindRejected, "")
	if !strings.Contains(err.Error(), "tool nope was rejected by server mem: ") {
		t.Errorf("message %q", err)
	}
}

func TestAdapterTimeoutCancelsOnServer(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan struct{})
	srv := adServer(t, map[string]mcp.ToolHandler{
		"slow": func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		},
	})
	b := adConnect(t, srv)
	desc := &mcp.Tool{Name: "slow"}
	tl := AdaptTool(b, "mem", desc, nil, 150*time.Millisecond)
	_, err := adExec(t, tl, `{}`)
	wantCallErr(t, err, KindTimeout, "tool slow timed out after 0.15 s and was cancelled; try a smaller request or try again later")
	<-started
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the server-side handler never saw its context cancelled")
	}
}

func TestAdapterKeepsSchemaBytes(t *testing.T) {
	// Key order that a decode/encode round trip would change.
	schema := `{"type":"object","properties":{"zeta":{"type":"number","minimum":1.5},"alpha":{"type":"string"}},"required":["zeta"]}`
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "k", Description: "d", InputSchema: json.RawMessage(schema)}, adFixed(&mcp.CallToolResult{}))
	tl := adTool(t, adConnect(t, srv), "k")
	if string(tl.InputSchema) != schema {
		t.Errorf("schema\n%s\nwant byte for byte\n%s", tl.InputSchema, schema)
	}
	var m map[string]any
	_ = json.Unmarshal([]byte(schema), &m)
	if again, _ := json.Marshal(m); string(again) == schema {
		t.Fatal("test schema survives a round trip; it cannot detect a re-encoding")
	}
	if tl.Origin != "mem" || !tl.Validate || tl.Description != "d" {
		t.Errorf("tool fields: origin %q validate %v description %q", tl.Origin, tl.Validate, tl.Description)
	}
}

func TestBridgeToolFilters(t *testing.T) {
	srv := adServer(t, map[string]mcp.ToolHandler{
		"a": adFixed(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from a"}}}),
		"b": adFixed(&mcp.CallToolResult{}),
		"c": adFixed(&mcp.CallToolResult{}),
	})
	b := adConnect(t, srv)
	b.cfg = mcpconfig.Server{Name: "mem", ToolPrefix: "x_", AllowedTools: []string{"a", "b"}, ExcludedTools: []string{"b"}}
	tools, err := b.listTools(context.Background(), curConn(b))
	if err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	b.setToolsLocked(tools)
	b.mu.Unlock()
	var names []string
	for _, tl := range b.Tools() {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "x_a" {
		t.Fatalf("tools after filters = %v, want [x_a]", names)
	}
	if got, err := adExec(t, b.Tools()[0], `{}`); err != nil || got != "from a" {
		t.Errorf("prefixed tool calls the server's name: %q, %v", got, err)
	}
}
