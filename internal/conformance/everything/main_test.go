package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func startFixture(t *testing.T) (*mcpserver.Server, string) {
	t.Helper()
	srv, closeStore, err := newServer(context.Background(), t.TempDir(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	h := mcpserver.NewHTTPHandler(srv, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		h.CloseSessions()
		closeStore()
	})
	return srv, ts.URL + mcpserver.HTTPPath
}

func connectAt(t *testing.T, url, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("protocol %s, want %s", got, version)
	}
	return cs
}

// TestFixtureSimpleTextTakesDirectPath: the fixture's plain-text tools are
// agent tools, so a 2025-11-25 session's call of one is answered on the
// direct path, as agentapp serve answers its own tools.
func TestFixtureSimpleTextTakesDirectPath(t *testing.T) {
	srv, url := startFixture(t)
	cs := connectAt(t, url, "2025-11-25", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "This is a simple text response for testing." {
		t.Fatalf("test_simple_text: %v %+v", err, res)
	}
	if n := srv.DirectCalls(); n != 1 {
		t.Errorf("the direct path answered %d calls, want 1", n)
	}
}

// TestFixtureInputRequired: a 2026-07-28 client answers the fixture's
// input requests and gets the tool's result; state the server signed
// comes back through the rounds, and an altered one is refused.
func TestFixtureInputRequired(t *testing.T) {
	_, url := startFixture(t)
	asked := 0
	cs := connectAt(t, url, "2026-07-28", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			if strings.Contains(req.Params.Message, "color") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "green"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_input_required_result_multi_round"})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "Ada likes green." || asked != 2 {
		t.Fatalf("multi-round: %v %+v (asked %d times)", err, res, asked)
	}
	params := &mcp.CallToolParams{Name: "test_input_required_result_tampered_state",
		InputResponses: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}},
		RequestState:   "eyJ0b29sIjoidGVzdF9pbnB1dF9yZXF1aXJlZF9yZXN1bHRfdGFtcGVyZWRfc3RhdGUiLCJyb3VuZCI6MX0.AAAA"}
	if _, err := cs.CallTool(ctx, params); err == nil || !strings.Contains(err.Error(), "requestState") {
		t.Fatalf("tampered requestState: %v, want the integrity error", err)
	}
}
