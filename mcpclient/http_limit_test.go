package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPResponseBodyIsBounded: a plain JSON answer over the frame limit
// is refused, the request fails with the reason, and the session lives
// on.
func TestHTTPResponseBodyIsBounded(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ N int }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	hs := httptest.NewServer(h)
	defer hs.Close()
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "web", URL: hs.URL}, withMaxFrame(64<<10))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = adExec(t, adTool(t, b, "big"), `{"n":200000}`)
	wantCallErr(t, err, KindRejected, "")
	if !strings.Contains(err.Error(), "server web sent a response of") || !strings.Contains(err.Error(), "over the 65536-byte limit; it was refused") {
		t.Errorf("error %q", err)
	}
	if got, err := adExec(t, adTool(t, b, "big"), `{"n":10}`); err != nil || got != "xxxxxxxxxx" {
		t.Errorf("session after the refused answer: %q, %v", got, err)
	}
}
