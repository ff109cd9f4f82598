package mcpclient

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWithAppsAdvertises: WithApps puts the MCP Apps extension with its
// MIME type in initialize, a bridge without it says nothing of it, and
// ToolMeta returns the _meta a tool was listed with.
func TestWithAppsAdvertises(t *testing.T) {
	for _, apps := range []bool{true, false} {
		got := make(chan map[string]any, 1)
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{
			InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
				got <- req.Session.InitializeParams().Capabilities.Extensions
			},
		})
		srv.AddTool(&mcp.Tool{Name: "show", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://s/v.html"}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		var opts []ConnectOption
		if apps {
			opts = append(opts, WithApps())
		}
		b, err := ConnectInMemory(context.Background(), "s", srv, opts...)
		if err != nil {
			t.Fatal(err)
		}
		var ext map[string]any
		select {
		case ext = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("the server was not initialized within 10 s")
		}
		ui, ok := ext[AppsExtension].(map[string]any)
		switch {
		case apps && (!ok || len(ui["mimeTypes"].([]any)) != 1 || ui["mimeTypes"].([]any)[0] != AppMIMEType):
			t.Errorf("with WithApps the extensions are %v", ext)
		case !apps && ext[AppsExtension] != nil:
			t.Errorf("without WithApps the extensions are %v", ext)
		}
		if m, _ := b.ToolMeta("show")["ui"].(map[string]any); m["resourceUri"] != "ui://s/v.html" {
			t.Errorf("ToolMeta(show) = %v", b.ToolMeta("show"))
		}
		if b.ToolMeta("nothing") != nil {
			t.Error("ToolMeta of no tool is not nil")
		}
		b.Close()
	}
}
