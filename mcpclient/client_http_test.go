package mcpclient

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTestServer serves an MCP server over streamable HTTP behind a bearer
// token check, recording the X-Tenant header it receives.
func httpTestServer(t *testing.T, token string) (*httptest.Server, *atomic.Value) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "greet",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Who string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + in.Who}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var tenant atomic.Value
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		tenant.Store(r.Header.Get("X-Tenant"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &tenant
}

func TestHTTPBridge(t *testing.T) {
	ts, tenant := httpTestServer(t, "s3cret")
	b, err := Connect(context.Background(), mcpconfig.Server{
		Name: "web", URL: ts.URL, Token: "s3cret", Headers: map[string]string{"X-Tenant": "acme"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tl := adTool(t, b, "greet")
	if want := `{"type":"object","properties":{"who":{"type":"string"}},"required":["who"]}`; string(tl.InputSchema) != want {
		t.Errorf("schema over HTTP\n%s\nwant\n%s", tl.InputSchema, want)
	}
	if got, err := adExec(t, tl, `{"who":"Ann"}`); err != nil || got != "hello Ann" {
		t.Errorf("greet: %q, %v", got, err)
	}
	if got := tenant.Load(); got != "acme" {
		t.Errorf("X-Tenant header = %v", got)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestHTTPUnauthorized(t *testing.T) {
	ts, _ := httpTestServer(t, "s3cret")
	for _, c := range []struct{ token, want string }{
		{"", `the server answered 401 Unauthorized: no bearer token was sent; add "headers": {"Authorization": "Bearer ${TOKEN}"} to the server in the config (agentapp mcp takes --token or AGENTAPP_MCP_TOKEN)`},
		{"wrong", "the server answered 401 Unauthorized: the bearer token was refused; check that it is the right one and not expired"},
	} {
		_, err := Connect(context.Background(), mcpconfig.Server{Name: "web", URL: ts.URL, Token: c.token})
		if err == nil {
			t.Fatalf("token %q: connected", c.token)
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "connecting to MCP server web ("+ts.URL+") failed during initialize") {
			t.Errorf("token %q: error\n%v\nwant it to contain\n%s", c.token, err, c.want)
		}
	}
}

// TestNoSSEFallbackForFailingServer: a streamable HTTP server that
// refuses the draft server/discover probe (400, as many do) and then fails
// initialize is not taken for a legacy SSE server: no SSE stream is
// opened, and the error is streamable HTTP's.
func TestNoSSEFallbackForFailingServer(t *testing.T) {
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), `"server/discover"`) {
			http.Error(w, "unknown method", http.StatusBadRequest)
			return
		}
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer ts.Close()
	_, err := Connect(context.Background(), mcpconfig.Server{Name: "broken", URL: ts.URL, ConnectTimeout: 10 * time.Second})
	if err == nil {
		t.Fatal("connected")
	}
	if gets.Load() != 0 || strings.Contains(err.Error(), "legacy SSE") {
		t.Errorf("%d GETs; error %v", gets.Load(), err)
	}
}
