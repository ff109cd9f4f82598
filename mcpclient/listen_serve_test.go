package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// methodCounter counts the JSON-RPC methods of the POSTs that reach h.
type methodCounter struct {
	mu sync.Mutex
	n  map[string]int
	h  http.Handler
}

func (m *methodCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct{ Method string }
		if json.Unmarshal(body, &msg) == nil {
			m.mu.Lock()
			m.n[msg.Method]++
			m.mu.Unlock()
		}
	}
	m.h.ServeHTTP(w, r)
}

func (m *methodCounter) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n[method]
}

// agentapp serve over HTTP at 2026-07-28: its lists carry ttlMs 0, so the
// host asking again lists again (the table's generation stays: the list is
// the same), and its resources are listed afresh each time.
func TestServeHTTPNextListsTTLZero(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := support.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kb.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	server := mcpserver.New(assistant.ServerOptions(svc, k, "test"))
	mc := &methodCounter{n: map[string]int{}, h: mcpserver.NewHTTPHandler(server, &mcpserver.HTTPOptions{Token: "tok"})}
	ts := httptest.NewServer(mc)
	t.Cleanup(ts.Close)
	b := connectAs(t, ts.URL+mcpserver.HTTPPath, "tok", "")
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	gen, _ := b.Refresh(ctx)
	for range 2 {
		if g, err := b.Refresh(ctx); err != nil || g != gen {
			t.Fatalf("Refresh: generation %d, %v; want %d", g, err, gen)
		}
		if _, err := b.Resources(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := mc.count("tools/list"); n != 4 {
		t.Errorf("%d tools/list requests, want 4 (the connect's and 3 more)", n)
	}
	if n := mc.count("resources/list"); n != 3 {
		t.Errorf("%d resources/list requests, want 3 (the connect's and 2 more)", n)
	}
}
