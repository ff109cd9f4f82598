package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPServesBothGenerations: one endpoint with the default options
// answers 2025-11-25 sessions and session-less 2026-07-28 requests, and
// the latter do not count against the session bound (a bound of one, held
// by the 2025-11-25 session, which must survive them).
func TestHTTPServesBothGenerations(t *testing.T) {
	srv := mcpserver.New(newDomain(t).options())
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{MaxSessions: 1}))
	defer ts.Close()
	ctx := context.Background()
	url := ts.URL + mcpserver.HTTPPath
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)

	old, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" || old.ID() == "" {
		t.Fatalf("2025-11-25 client: protocol %q, session %q; want 2025-11-25 with a session", v, old.ID())
	}
	for range 3 {
		next, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if v := next.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("default Go SDK client: protocol %q, want 2026-07-28", v)
		}
		res, err := next.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}})
		if err != nil || res.IsError {
			t.Fatalf("2026-07-28 tools/call: %v %+v", err, res)
		}
		next.Close()
	}
	res, err := old.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}})
	if err != nil || res.IsError {
		t.Fatalf("the 2025-11-25 session after 2026-07-28 requests (bound 1): %v %+v", err, res)
	}
	if n := srv.DirectTaken(); n != 1 {
		t.Errorf("the direct path answered %d calls, want the session's 1", n)
	}
}

// TestHTTPDiscoverListsBothGenerations: server/discover is answered by
// the session-less handler, which lists 2026-07-28 beside the session
// versions and declares what the server answers (prompts/list among it).
// A 2026-07-28 request without its header gets the spec's header error
// (-32020, 400), not the session handler's refusal of the version.
func TestHTTPDiscoverListsBothGenerations(t *testing.T) {
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(newDomain(t).options()), nil))
	defer ts.Close()
	post := func(method, header, params string) (int, []byte) {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}` + params + `}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Method", method)
		if header != "" {
			req.Header.Set("Mcp-Protocol-Version", header)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s (header %q) opened a session", method, header)
		}
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, data
	}
	status, data := post("server/discover", "2026-07-28", "")
	var got struct {
		Result struct {
			SupportedVersions []string       `json:"supportedVersions"`
			Capabilities      map[string]any `json:"capabilities"`
		} `json:"result"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &got); err != nil || status != http.StatusOK {
		t.Fatalf("server/discover: %d %s", status, data)
	}
	v := got.Result.SupportedVersions
	if !slices.Contains(v, "2026-07-28") || !slices.Contains(v, "2025-11-25") {
		t.Errorf("supportedVersions %v, want 2026-07-28 and 2025-11-25", v)
	}
	if got.Result.Capabilities["prompts"] == nil || got.Result.Capabilities["tools"] == nil {
		t.Errorf("capabilities %v, want tools and prompts declared", got.Result.Capabilities)
	}
	for _, method := range []string{"server/discover", "tools/list"} {
		status, data = post(method, "", "")
		got.Error.Code = 0
		if json.Unmarshal(data, &got); status != http.StatusBadRequest || got.Error.Code != -32020 {
			t.Errorf("%s with _meta and no header: %d %s, want 400 with -32020", method, status, data)
		}
	}
}

// TestStdioNegotiates2026: the line transport (what `serve` uses on
// stdio) gives the Go SDK's default client protocol 2026-07-28.
func TestStdioNegotiates2026(t *testing.T) {
	srv := mcpserver.New(newDomain(t).options())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), srv.NewIOTransport(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("stdio: protocol %q, want 2026-07-28", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}})
	if err != nil || res.IsError {
		t.Fatalf("stdio 2026-07-28 tools/call: %v %+v", err, res)
	}
}

// TestHTTPNextGenerationProgress: a 2026-07-28 call that asks for progress
// gets it on its own event stream (there is no session stream to send it
// on); the tool is registered through Options.SDK.
func TestHTTPNextGenerationProgress(t *testing.T) {
	opts := newDomain(t).options()
	opts.SDK = &mcpserver.SDKFeatures{Register: func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "steps", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for _, p := range []float64{1, 2} {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: p, Total: 2}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	}}
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(opts), nil))
	defer ts.Close()
	progress := make(chan float64, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { progress <- req.Params.Progress },
	}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + mcpserver.HTTPPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %s", v)
	}
	params := &mcp.CallToolParams{Name: "steps", Meta: mcp.Meta{"progressToken": "p1"}}
	if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	// The client hands notifications to its handler on its own
	// goroutine, so they may reach it just after the answer.
	for i := range 2 {
		select {
		case <-progress:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d progress notifications, want 2", i)
		}
	}
}
