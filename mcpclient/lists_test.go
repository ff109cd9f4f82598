package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pagingServer is an in-memory server whose four list methods answer with
// page(method, cursor) instead of the server's own pagination.
func pagingServer(page func(method, cursor string) (items int, next string)) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "pages", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, adFixed(&mcp.CallToolResult{}))
	srv.AddResource(&mcp.Resource{URI: "test://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://t/{x}", Name: "t"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "p"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var cursor string
			switch p := req.GetParams().(type) {
			case *mcp.ListToolsParams:
				cursor = p.Cursor
			case *mcp.ListResourcesParams:
				cursor = p.Cursor
			case *mcp.ListResourceTemplatesParams:
				cursor = p.Cursor
			case *mcp.ListPromptsParams:
				cursor = p.Cursor
			default:
				return next(ctx, method, req)
			}
			n, nc := page(method, cursor)
			switch method {
			case "tools/list":
				r := &mcp.ListToolsResult{NextCursor: nc}
				for i := range n {
					r.Tools = append(r.Tools, &mcp.Tool{Name: fmt.Sprintf("t%s_%d", cursor, i), InputSchema: map[string]any{"type": "object"}})
				}
				return r, nil
			case "resources/list":
				r := &mcp.ListResourcesResult{NextCursor: nc}
				for i := range n {
					r.Resources = append(r.Resources, &mcp.Resource{URI: fmt.Sprintf("test://%s/%d", cursor, i), Name: "r"})
				}
				return r, nil
			case "resources/templates/list":
				r := &mcp.ListResourceTemplatesResult{NextCursor: nc}
				for i := range n {
					r.ResourceTemplates = append(r.ResourceTemplates, &mcp.ResourceTemplate{URITemplate: fmt.Sprintf("test://%s/%d/{x}", cursor, i), Name: "t"})
				}
				return r, nil
			default:
				r := &mcp.ListPromptsResult{NextCursor: nc}
				for i := range n {
					r.Prompts = append(r.Prompts, &mcp.Prompt{Name: fmt.Sprintf("p%s_%d", cursor, i)})
				}
				return r, nil
			}
		}
	})
	return srv
}

// listEach runs every list of the bridge but tools/list (which Connect
// ran) and returns their errors by method.
func listEach(b *Bridge) map[string]error {
	ctx := context.Background()
	_, r := b.ListResources(ctx)
	_, tpl := b.listResourceTemplates(ctx)
	_, p := b.ListPrompts(ctx)
	return map[string]error{"resources/list": r, "resources/templates/list": tpl, "prompts/list": p}
}

func wantLimit(t *testing.T, method string, err error, limit, msg string) {
	t.Helper()
	var le *listLimitError
	if !errors.As(err, &le) || le.Limit != limit || le.Method != method {
		t.Fatalf("%s: error %v (%T), want a listLimitError on %s", method, err, err, limit)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("%s: error %q lacks %q", method, err, msg)
	}
}

// TestListLimits: every paginated list stops at a repeated cursor, at the
// page limit, at the item limit and at the byte limit, each saying which.
func TestListLimits(t *testing.T) {
	methods := []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"}
	cases := []struct {
		name   string
		limits listLimits
		page   func(cursor string) (int, string)
		limit  string
		msg    func(method string) string
	}{
		{"endless", listLimits{}, func(c string) (int, string) { return 1, c + "x" },
			"pages", func(m string) string {
				return `server "mem" sent page 100 of ` + m + " with a cursor to page 101; the limit is 100 pages: the server is probably paginating in a loop"
			}},
		{"cursor loop", listLimits{}, func(c string) (int, string) {
			if c == "b" {
				return 1, "a"
			}
			return 1, "b"
		}, "cursor", func(m string) string {
			return `server "mem" sent the cursor "b" again on page 3 of ` + m + ` (first on page 1): the server is paginating in a loop`
		}},
		{"items", listLimits{MaxItems: 25}, func(c string) (int, string) { return 10, c + "x" },
			"items", func(m string) string {
				return `server "mem" listed more than 25 ` + listNouns[m] + " in " + m + " (page 3); the limit is 25"
			}},
		{"bytes", listLimits{MaxBytes: 4 << 10}, func(c string) (int, string) { return 20, c + "x" },
			"bytes", func(m string) string { return `server "mem" sent more than 4 KiB in ` }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := pagingServer(func(method, cursor string) (int, string) { return c.page(cursor) })
			// Connect lists the tools first: it fails on the limit.
			_, err := ConnectInMemory(context.Background(), "mem", srv, withListLimits(c.limits))
			wantLimit(t, "tools/list", err, c.limit, c.msg("tools/list"))
			// The other lists, on a bridge whose tools/list ends at once.
			srv = pagingServer(func(method, cursor string) (int, string) {
				if method == "tools/list" {
					return 1, ""
				}
				return c.page(cursor)
			})
			b, err := ConnectInMemory(context.Background(), "mem", srv, withListLimits(c.limits))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			errs := listEach(b)
			for _, m := range methods[1:] {
				wantLimit(t, m, errs[m], c.limit, c.msg(m))
			}
		})
	}
	t.Run("within the limits", func(t *testing.T) {
		srv := pagingServer(func(method, cursor string) (int, string) {
			if len(cursor) == 99 {
				return 100, ""
			}
			return 100, cursor + "x"
		})
		b, err := ConnectInMemory(context.Background(), "mem", srv)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if n := len(b.Tools()); n != 10_000 {
			t.Errorf("%d tools, want 100 pages of 100", n)
		}
		for m, err := range listEach(b) {
			if err != nil {
				t.Errorf("%s: %v", m, err)
			}
		}
	})
}

// TestRequestsWithoutDeadlineAreBounded: a request sent with a context
// without a deadline is bounded by the call timeout.
func TestRequestsWithoutDeadlineAreBounded(t *testing.T) {
	cfg := mcpconfig.Server{Name: "hang", Command: testServerPath(t), Args: []string{"-mode", "hang-resources"}, CallTimeout: 300 * time.Millisecond}
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	for name, req := range map[string]func() error{
		"resources/list": func() error { _, err := b.ListResources(ctx); return err },
		"resources/read": func() error { _, err := b.ReadResource(ctx, "test://hello"); return err },
		"tools/call":     func() error { _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); return err },
	} {
		start := time.Now()
		err := req()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: error %v, want the deadline", name, err)
		}
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("%s took %v with a 300 ms call timeout", name, took)
		}
		if name != "tools/call" && !strings.Contains(err.Error(), "no answer within 300ms (the call timeout") {
			t.Errorf("%s: error %q does not name the call timeout", name, err)
		}
	}
}
