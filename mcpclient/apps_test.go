package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
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

// TestResultHook: a tools/call under WithResultHook hands the hook the
// result as the server sent it (an image the model's text only
// describes), with the call's context; without the hook nothing is called.
func TestResultHook(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "draw", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "drawn"}, &mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNG")}}}, nil
		})
	b, err := ConnectInMemory(context.Background(), "s", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var tool *agent.Tool
	for _, tl := range b.Tools() {
		if tl.Name == "draw" {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatal("no draw tool")
	}
	type mark struct{}
	var got []*mcp.CallToolResult
	ctx := WithResultHook(context.WithValue(context.Background(), mark{}, "call-ctx"), func(cctx context.Context, res *mcp.CallToolResult) {
		if cctx.Value(mark{}) != "call-ctx" {
			t.Error("the hook did not get the call's context")
		}
		got = append(got, res)
	})
	out, err := tool.Execute(ctx, json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Content) != 2 {
		t.Fatalf("the hook got %d results: %+v", len(got), got)
	}
	if img, ok := got[0].Content[1].(*mcp.ImageContent); !ok || string(img.Data) != "PNG" {
		t.Errorf("the hook's result lost the image: %#v", got[0].Content[1])
	}
	if s := fmt.Sprint(out); strings.Contains(s, "PNG") {
		t.Errorf("the model's output carries the image's bytes: %s", s)
	}
	if _, err := tool.Execute(context.Background(), json.RawMessage(`{}`)); err != nil || len(got) != 1 {
		t.Errorf("without the hook: err %v, %d results", err, len(got))
	}
}
