package mcpserver_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func viewResource() mcpserver.StaticResource {
	return mcpserver.StaticResource{
		URI: "ui://test/view", Name: "view", Title: "A view", MIMEType: "text/html;profile=mcp-app",
		Text: "<!doctype html><p>hi</p>",
		Meta: map[string]any{"ui": map[string]any{"prefersBorder": true}},
	}
}

func lookupTool() *agent.Tool {
	return &agent.Tool{Name: "lookup", Description: "Looks up.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return map[string]any{"ok": true}, nil }}
}

// TestStaticResources: a static resource is listed (before the documents,
// on the first page only) and read with its _meta, and a tool's _meta goes
// out in tools/list, with and without a document store.
func TestStaticResources(t *testing.T) {
	ctx := context.Background()
	for _, docs := range []mcpserver.DocStore{nil, &fakeDocs{ids: []string{"a", "b", "c"}}} {
		cs := connect(t, mcpserver.New(&mcpserver.Options{
			Tools:     []*agent.Tool{lookupTool()},
			Docs:      docs,
			PageSize:  2,
			Resources: []mcpserver.StaticResource{viewResource()},
			ToolMeta:  map[string]map[string]any{"lookup": {"ui": map[string]any{"resourceUri": "ui://test/view"}}},
		}))
		if cs.InitializeResult().Capabilities.Resources == nil {
			t.Fatal("no resources capability with a static resource")
		}

		var pages [][]string
		cursor := ""
		for range 10 {
			res, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages = append(pages, uris(res.Resources))
			if res.NextCursor == "" {
				break
			}
			cursor = res.NextCursor
		}
		want := [][]string{{"ui://test/view"}}
		if docs != nil {
			want = [][]string{{"ui://test/view", "docs://kb/a", "docs://kb/b"}, {"docs://kb/c"}}
		}
		if diff := cmp.Diff(want, pages); diff != "" {
			t.Errorf("docs=%v: pages (-want +got):\n%s", docs != nil, diff)
		}
		all := listAll(t, cs)
		if all[0].Meta["ui"] == nil || all[0].MIMEType != "text/html;profile=mcp-app" || all[0].Size != int64(len(viewResource().Text)) {
			t.Errorf("listed view: %+v", all[0])
		}

		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://test/view"})
		if err != nil {
			t.Fatal(err)
		}
		if len(read.Contents) != 1 || read.Contents[0].Text != viewResource().Text ||
			read.Contents[0].MIMEType != "text/html;profile=mcp-app" || read.Contents[0].Meta["ui"] == nil {
			t.Errorf("read view: %+v", read.Contents)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://test/other"}); err == nil {
			t.Error("reading an unknown ui:// resource succeeded")
		}

		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(tools.Tools[0].Meta)
		if string(got) != `{"ui":{"resourceUri":"ui://test/view"}}` {
			t.Errorf("tool _meta = %s", got)
		}
	}
}

// TestStaticResourcePanics: like a bad tool, a bad static resource is a
// programming error New reports at once.
func TestStaticResourcePanics(t *testing.T) {
	dup := viewResource()
	noURI := viewResource()
	noURI.URI = ""
	docScheme := viewResource()
	docScheme.URI = "docs://kb/x"
	for name, opts := range map[string]*mcpserver.Options{
		"twice":         {Resources: []mcpserver.StaticResource{viewResource(), dup}},
		"no URI":        {Resources: []mcpserver.StaticResource{noURI}},
		"docs scheme":   {Resources: []mcpserver.StaticResource{docScheme}},
		"meta, no tool": {ToolMeta: map[string]map[string]any{"missing": {}}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "mcpserver.New") {
					t.Errorf("recovered %v, want a panic from New", r)
				}
			}()
			mcpserver.New(opts)
		})
	}
}
