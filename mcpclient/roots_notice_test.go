package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 server has no session to keep roots in and may refuse
// notifications/roots/list_changed (400); the SDK's transport closes the
// connection on that refusal. The bridge with roots must neither send it
// when connecting nor when the roots change, and its calls keep working.
func TestNoRootsNoticeAt20260728(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "next", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "greet", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var notices, versions atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if r.Header.Get("Mcp-Protocol-Version") == "2026-07-28" {
			versions.Add(1)
		}
		if strings.Contains(string(body), "notifications/roots/list_changed") {
			notices.Add(1)
			http.Error(w, "no sessions here", http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	b, err := Connect(context.Background(), mcpconfig.Server{Name: "next", URL: ts.URL}, WithRoots([]string{t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if versions.Load() == 0 {
		t.Fatal("the client never spoke 2026-07-28 to the stateless server; the test proves nothing")
	}
	tl := adTool(t, b, "greet")
	if got, err := adExec(t, tl, `{}`); err != nil || got != "hello" {
		t.Fatalf("greet after connecting: %q, %v", got, err)
	}
	if err := b.SetRoots([]string{t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if got, err := adExec(t, tl, `{}`); err != nil || got != "hello" {
		t.Fatalf("greet after SetRoots: %q, %v", got, err)
	}
	if n := notices.Load(); n != 0 {
		t.Errorf("%d notifications/roots/list_changed sent to a 2026-07-28 server", n)
	}
}
