package mcpclient

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stdio server that silently ignores server/discover must not hang the
// connect: the probe gives up after discoverProbeTimeout, the SDK falls
// back to initialize at 2025-11-25 on the same process, and the command is
// remembered so that its next connect skips the probe.
func TestStdioDiscoverProbeSilentServer(t *testing.T) {
	old := discoverProbeTimeout
	discoverProbeTimeout = 300 * time.Millisecond
	t.Cleanup(func() { discoverProbeTimeout = old })
	cfg := mcpconfig.Server{Name: "silent", Command: testServerPath(t), Args: []string{"-mode", "silent"}, Dir: t.TempDir(), ConnectTimeout: 20 * time.Second}
	if got := stdioVersion(&cfg); got != stdiofast.NewProtocolVersion {
		t.Fatalf("a new command is offered %s, want the probe (%s)", got, stdiofast.NewProtocolVersion)
	}
	start := time.Now()
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if v := b.session().InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("negotiated %s with a server that only knows initialize", v)
	}
	if took > 10*time.Second {
		t.Errorf("connect took %v: the probe was not bounded", took)
	}
	tl := adTool(t, b, "a")
	if got, err := adExec(t, tl, `{}`); err != nil || got != "a called" {
		t.Errorf("call after the fallback: %q, %v", got, err)
	}
	b.Close()
	if got := stdioVersion(&cfg); got != stdioProtocolVersion {
		t.Errorf("after the fallback the command is offered %s, want %s straight away", got, stdioProtocolVersion)
	}
}

// A stdio server that answers server/discover (the SDK's) speaks
// 2026-07-28, and its command is not remembered as legacy.
func TestStdioDiscoverProbeModernServer(t *testing.T) {
	cfg := mcpconfig.Server{Name: "modern", Command: testServerPath(t), Dir: t.TempDir()}
	b, err := Connect(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != stdiofast.NewProtocolVersion {
		t.Errorf("negotiated %s with a server that answers server/discover", v)
	}
	if got := stdioVersion(&cfg); got != stdiofast.NewProtocolVersion {
		t.Errorf("a modern command is offered %s afterwards", got)
	}
	tl := adTool(t, b, "echo")
	if got, err := adExec(t, tl, `{"text":"hi"}`); err != nil || got == "" {
		t.Errorf("echo: %q, %v", got, err)
	}
}

// asLegacyStdio makes cfg's command connect at 2025-11-25, as a server
// that does not answer server/discover would: the tests of the direct
// tools/call path, which serves only such sessions, use it with the SDK's
// test server (which answers it).
func asLegacyStdio(t testing.TB, cfg mcpconfig.Server) mcpconfig.Server {
	t.Helper()
	key := stdioKey(&cfg)
	legacyStdio.Remember(key, true)
	t.Cleanup(func() {
		legacyStdio.Remember(key, false)
	})
	return cfg
}

// On HTTP the probe is not cut short: the server always answers, and its
// server/discover may wait for an OAuth login (the conformance suite's
// auth scenarios failed when it was).
func TestHTTPDiscoverNotBounded(t *testing.T) {
	old := discoverProbeTimeout
	discoverProbeTimeout = 100 * time.Millisecond
	t.Cleanup(func() { discoverProbeTimeout = old })
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if strings.Contains(string(body), `"server/discover"`) {
			time.Sleep(500 * time.Millisecond)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "slow", URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != stdiofast.NewProtocolVersion {
		t.Errorf("negotiated %s: the slow server/discover was cut short on HTTP", v)
	}
}
