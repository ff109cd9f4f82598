package mcpclient

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// brokenCatalogServer advertises resources and prompts (it has one of
// each) but fails every resources/list and prompts/list until fixed is
// closed.
func brokenCatalogServer(fixed <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ping", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	srv.AddResource(&mcp.Resource{URI: "test://one", Name: "one"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://one", Text: "1"}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "hello"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
	})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			select {
			case <-fixed:
			default:
				if method == "resources/list" || method == "prompts/list" {
					return nil, errors.New("the catalog is broken")
				}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// A server whose resources/list and prompts/list fail though it
// advertises both still connects, with a warning for each, and its tools
// work; the lists are tried again when next needed.
func TestCatalogFailureStillConnects(t *testing.T) {
	fixed := make(chan struct{})
	logger, logs := testkit.NewLogger()
	b, err := ConnectInMemory(context.Background(), "broken", brokenCatalogServer(fixed), WithLogger(logger))
	if err != nil {
		t.Fatalf("connect failed over a broken catalog: %v", err)
	}
	defer b.Close()
	text := logs.String()
	for _, want := range []string{"advertises resources but listing them failed", "advertises prompts but listing them failed", "the catalog is broken"} {
		if !strings.Contains(text, want) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	if len(b.Tools()) != 1 {
		t.Errorf("tools %d, want 1", len(b.Tools()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.Resources(ctx); err == nil {
		t.Error("Resources succeeded while the listing still fails")
	}
	close(fixed)
	rs, err := b.Resources(ctx)
	if err != nil || len(rs) != 1 || rs[0].URI != "test://one" {
		t.Errorf("after the fix: %v, %v", rs, err)
	}
	ps, err := b.Prompts(ctx)
	if err != nil || len(ps) != 1 || ps[0].Name != "hello" {
		t.Errorf("prompts after the fix: %v, %v", ps, err)
	}
}

// notifications/resources/list_changed makes the next Resources list
// again; until then the cached list is served.
func TestResourceListChangedRefreshes(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	read := func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	srv.AddResource(&mcp.Resource{URI: "test://a", Name: "a"}, read)
	srv.AddPrompt(&mcp.Prompt{Name: "p1"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	b, err := ConnectInMemory(context.Background(), "s", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if rs, _ := b.Resources(ctx); len(rs) != 1 {
		t.Fatalf("resources %v", rs)
	}
	srv.AddResource(&mcp.Resource{URI: "test://b", Name: "b"}, read) // notifies
	srv.AddPrompt(&mcp.Prompt{Name: "p2"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		rs, err := b.Resources(ctx)
		ps, perr := b.Prompts(ctx)
		if err == nil && perr == nil && len(rs) == 2 && len(ps) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after list_changed: resources %d (%v), prompts %d (%v)", len(rs), err, len(ps), perr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WithServerLogs asks the server for its level and hands each message on,
// escaped and cut; the server's own filter drops what is below the level.
func TestServerLogs(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{HasTools: true})
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "chatter"})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Logger: "db", Data: "disk \x1b[31mfull"})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: map[string]any{"n": 1}})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "critical", Data: strings.Repeat("x", 5000)})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "last", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Data: "last"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	got := make(chan ServerLog, 10)
	b, err := ConnectInMemory(context.Background(), "s", srv, WithServerLogs("warning", func(l ServerLog) { got <- l }))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "log", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var logs []ServerLog
	for len(logs) < 3 {
		select {
		case l := <-got:
			logs = append(logs, l)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d log messages: %+v", len(logs), logs)
		}
	}
	if logs[0].Level != "error" || logs[0].Logger != "db" || logs[0].Text != `disk \x1b[31mfull` || logs[0].Server != "s" {
		t.Errorf("first message %+v", logs[0])
	}
	if logs[1].Text != `{"n":1}` {
		t.Errorf("a JSON message became %q", logs[1].Text)
	}
	if n := len(logs[2].Text); n > maxServerLogText+100 {
		t.Errorf("a 5000-character message was passed on with %d bytes", n)
	}
	// Nothing below the level follows: the server sends a session's
	// messages in order, so a last message at the level, sent after all of
	// them, must be the next to arrive.
	if _, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "last", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-got:
		if l.Text != "last" {
			t.Errorf("a message below the level arrived: %+v", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the last message never arrived")
	}
}

// At protocol 2026-07-28 there is no logging/setLevel: the level goes in
// each request's _meta, the server's messages from it on arrive, and no
// "refused the log level" warning is logged (it was, on every connect to
// agentapp serve --http).
func TestServerLogsAt20260728(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, &mcp.ServerOptions{HasTools: true})
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "chatter"})
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Data: "disk full"})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()
	var warnings testkit.SyncBuffer
	got := make(chan ServerLog, 10)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "next", URL: ts.URL},
		WithLogger(slog.New(slog.NewTextHandler(&warnings, nil))),
		WithServerLogs("warning", func(l ServerLog) { got <- l }))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s; the test needs 2026-07-28", v)
	}
	if _, err := b.CallTool(context.Background(), &mcp.CallToolParams{Name: "log", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-got:
		if l.Level != "error" || l.Text != "disk full" {
			t.Errorf("first message %+v, want the error (the info one is below the level)", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no log message arrived at 2026-07-28")
	}
	if w := warnings.String(); strings.Contains(w, "log level") {
		t.Errorf("a warning about the log level: %s", w)
	}
}
