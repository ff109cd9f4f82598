package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// flakyHTTPServer is a streamable HTTP MCP server whose handler drops the
// connection (after reading the request: it reached the server) on the
// first tools/call of each tool named in drop. It counts the calls each
// tool's handler ran.
type flakyHTTPServer struct {
	*httptest.Server
	srv   *mcp.Server
	mu    sync.Mutex
	drop  map[string]bool
	calls map[string]int
}

// orderSchema has its keys out of order: a schema decoded into a map and
// encoded again would come out sorted. (The SDK's server compacts spacing,
// so key order is what shows that the client kept the bytes.)
const orderSchema = `{"type":"object","properties":{"zeta":{"type":"integer"},"alpha":{"type":"string"}}}`

func newFlakyHTTPServer(t *testing.T, drop ...string) *flakyHTTPServer {
	t.Helper()
	f := &flakyHTTPServer{drop: map[string]bool{}, calls: map[string]int{}}
	for _, d := range drop {
		f.drop[d] = true
	}
	f.srv = mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
	counted := func(name, text string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.mu.Lock()
			f.calls[name]++
			f.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
	}
	f.srv.AddTool(&mcp.Tool{Name: "lookup", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, counted("lookup", "looked up"))
	f.srv.AddTool(&mcp.Tool{Name: "order", InputSchema: json.RawMessage(orderSchema)}, counted("order", "ordered"))
	f.srv.AddTool(&mcp.Tool{Name: "addtool", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			f.srv.AddTool(&mcp.Tool{Name: "fresh", InputSchema: json.RawMessage(`{"type":"object","title":"kept as sent"}`)}, counted("fresh", "fresh works"))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return f.srv }, nil)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string
				Params struct{ Name string }
			}
			_ = json.Unmarshal(body, &msg)
			f.mu.Lock()
			cut := msg.Method == "tools/call" && f.drop[msg.Params.Name]
			if cut {
				delete(f.drop, msg.Params.Name)
				f.calls[msg.Params.Name]++ // it reached the server, which may have acted
			}
			f.mu.Unlock()
			if cut {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *flakyHTTPServer) count(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

// TestHTTPDroppedConnectionRetriesReadOnlyOnly: a connection dropped after
// the request reached the server is retried for a read-only tool (the
// model gets its answer) and not for a tool that may change something (the
// model gets an error; the server saw one call, not two).
func TestHTTPDroppedConnectionRetriesReadOnlyOnly(t *testing.T) {
	f := newFlakyHTTPServer(t, "lookup", "order")
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "flaky", URL: f.URL}, WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := adExec(t, adTool(t, b, "lookup"), `{}`); err != nil || got != "looked up" {
		t.Fatalf("read-only tool after a dropped connection: %q, %v", got, err)
	}
	_, err = adExec(t, adTool(t, b, "order"), `{}`)
	wantCallErr(t, err, KindConnection, "")
	if !strings.Contains(err.Error(), "tool order could not be called: ") || !strings.Contains(err.Error(), "(connection to server flaky)") {
		t.Errorf("error %q", err)
	}
	if n := f.count("order"); n != 1 {
		t.Errorf("order reached the server %d times, want 1 (no retry of a tool that may change something)", n)
	}
	if got, err := adExec(t, adTool(t, b, "order"), `{}`); err != nil || got != "ordered" {
		t.Errorf("the session after the dropped call: %q, %v", got, err)
	}
}

// refusingTransport fails the first n requests as a refused connection
// (the request never left), then passes requests on.
type refusingTransport struct {
	base http.RoundTripper
	left atomic.Int32
}

func (r *refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r.left.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	}
	return r.base.RoundTrip(req)
}

func withHTTPBase(rt http.RoundTripper) ConnectOption {
	return func(o *connectOptions) { o.httpBase = rt }
}

// TestHTTPRefusedConnectionRetriedWithBackoff: requests that could not
// reach the server are sent again after growing waits; more refusals than
// retries fail the call with the dial error.
func TestHTTPRefusedConnectionRetriedWithBackoff(t *testing.T) {
	f := newFlakyHTTPServer(t)
	rt := &refusingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	clock := newFakeClock()
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "flaky", URL: f.URL},
		withHTTPBase(rt), withRestartPolicy(clock.policy()), WithLogger(discardLogger()))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rt.left.Store(2)
	if got, err := adExec(t, adTool(t, b, "order"), `{}`); err != nil || got != "ordered" {
		t.Fatalf("order after two refused connections: %q, %v", got, err)
	}
	if want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond}; !equalDurations(clock.sleeps, want) {
		t.Errorf("waits %v, want %v", clock.sleeps, want)
	}
	rt.left.Store(httpDialRetries + 1)
	_, err = adExec(t, adTool(t, b, "order"), `{}`)
	wantCallErr(t, err, KindConnection, "")
	if !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error %q does not say the connection was refused", err)
	}
	if n := f.count("order"); n != 1 {
		t.Errorf("order ran %d times, want 1", n)
	}
}

// TestHTTPToolListChanged: over streamable HTTP the server's
// tools/list_changed arrives (on the SDK's standalone SSE stream), Refresh
// lists the new tool, and schemas are still kept byte for byte.
func TestHTTPToolListChanged(t *testing.T) {
	f := newFlakyHTTPServer(t)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "flaky", URL: f.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := string(adTool(t, b, "order").InputSchema); got != orderSchema {
		t.Errorf("schema not kept byte for byte over HTTP: %s", got)
	}
	gen, _ := b.Refresh(context.Background())
	if _, err := adExec(t, adTool(t, b, "addtool"), `{}`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.toolsChanged():
	case <-time.After(15 * time.Second):
		t.Fatal("notifications/tools/list_changed did not arrive over HTTP")
	}
	next, err := b.Refresh(context.Background())
	if err != nil || next == gen {
		t.Fatalf("Refresh: generation %d → %d, %v", gen, next, err)
	}
	fresh := adTool(t, b, "fresh")
	if string(fresh.InputSchema) != `{"type":"object","title":"kept as sent"}` {
		t.Errorf("refreshed schema %s", fresh.InputSchema)
	}
	if got, err := adExec(t, fresh, `{}`); err != nil || got != "fresh works" {
		t.Errorf("fresh: %q, %v", got, err)
	}
}

// fakeClock drives a restartPolicy without waiting: Sleep records the
// backoff and returns at once.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) policy() restartPolicy { return restartPolicy{Now: c.Now, Sleep: c.Sleep} }

// curConn returns the bridge's live connection.
func curConn(b *Bridge) *conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
