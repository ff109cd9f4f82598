package mcpclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/internal/oauthtest"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient/oauth"
	"github.com/agentapp/agentapp/mcpconfig"
)

// countingBrowser approves every login and counts how often it was asked.
func countingBrowser(n *atomic.Int32) func(context.Context, string) error {
	return func(ctx context.Context, u string) error { n.Add(1); return oauthtest.Browse(ctx, u) }
}

// TestSSEOAuthLoginRefreshLogout is TestOAuthLoginRefreshLogout for a
// server that speaks only the legacy SSE transport: the first connect
// logs in through the browser and stores the login; the next one, with an
// expired token and no browser, refreshes it and stores the new one; after
// the login is deleted, a connect needs a login again. No token appears
// in the logs or errors.
func TestSSEOAuthLoginRefreshLogout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 1, SSE: true})
	store := oauth.NewTokenStore(t.TempDir())
	logger, logs := testkit.NewLogger()
	var prompt strings.Builder
	var opened atomic.Int32
	cfg := mcpconfig.Server{Name: "legacy", URL: srv.URL, Transport: mcpconfig.TransportSSE}

	b, err := Connect(context.Background(), cfg, WithLogger(logger), WithOAuth(&oauth.Options{
		Store: store, Interactive: true, Prompt: &prompt, OpenURL: countingBrowser(&opened)}))
	if err != nil {
		t.Fatal(err)
	}
	callWhoami(t, b)
	_ = b.Close()
	if opened.Load() != 1 || srv.Logins() != 1 {
		t.Fatalf("browser opened %d times, %d logins; want 1 and 1", opened.Load(), srv.Logins())
	}
	if srv.Requests(http.MethodGet) != 1 || srv.Requests(http.MethodPost) == 0 {
		t.Errorf("%d event streams and %d POSTs reached the server with a token", srv.Requests(http.MethodGet), srv.Requests(http.MethodPost))
	}
	first, err := os.ReadFile(store.Path(srv.URL))
	if err != nil {
		t.Fatalf("the login was not stored: %v", err)
	}

	// Interactive, so that the connection holds a callback port, which
	// it must give back on close.
	port := freePort(t)
	pcfg := cfg
	pcfg.OAuth = &mcpconfig.OAuth{CallbackPort: port}
	refreshes := srv.Refreshes()
	b, err = Connect(context.Background(), pcfg, WithLogger(logger), WithOAuth(&oauth.Options{Store: store, Interactive: true, Prompt: &prompt, OpenURL: noBrowser(t)}))
	if err != nil {
		t.Fatalf("connect with the stored login: %v", err)
	}
	callWhoami(t, b)
	if portFree(port) {
		t.Errorf("callback port %d is not held while connected", port)
	}
	_ = b.Close()
	if !portFree(port) {
		t.Errorf("callback port %d is still open after Close", port)
	}
	if srv.Refreshes() == refreshes || srv.Logins() != 1 {
		t.Errorf("%d refreshes and %d logins; want the expired token refreshed without a new login", srv.Refreshes()-refreshes, srv.Logins())
	}
	if second, _ := os.ReadFile(store.Path(srv.URL)); string(first) == string(second) {
		t.Error("the refreshed token was not stored")
	}

	if had, err := store.Delete(srv.URL); !had || err != nil {
		t.Fatalf("Delete = %v, %v", had, err)
	}
	_, err = Connect(context.Background(), cfg, WithLogger(logger), WithOAuth(&oauth.Options{Store: store, OpenURL: noBrowser(t)}))
	var lr *oauth.LoginRequiredError
	if !errors.As(err, &lr) || lr.LoginHint() != "agentapp mcp login legacy" {
		t.Fatalf("after logout: %v, want a *oauth.LoginRequiredError", err)
	}
	text := logs.String() + prompt.String() + err.Error()
	for _, tok := range srv.Issued() {
		if strings.Contains(text, tok) {
			t.Errorf("token %s appears in the logs, prompt or errors:\n%s", tok, text)
		}
	}
}

// TestSSEOAuthRefreshRefused: a stored login whose refresh token the
// authorization server no longer accepts (invalid_grant) leads to a new
// login, not to a failed connect.
func TestSSEOAuthRefreshRefused(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 1, SSE: true})
	store := oauth.NewTokenStore(t.TempDir())
	var opened atomic.Int32
	cfg := mcpconfig.Server{Name: "legacy", URL: srv.URL, Transport: mcpconfig.TransportSSE}
	for i := range 2 {
		b, err := Connect(context.Background(), cfg, WithOAuth(&oauth.Options{
			Store: store, Interactive: true, Prompt: &strings.Builder{}, OpenURL: countingBrowser(&opened)}))
		if err != nil {
			t.Fatalf("connect %d: %v", i+1, err)
		}
		callWhoami(t, b)
		_ = b.Close()
		srv.Revoke()
	}
	if opened.Load() != 2 || srv.Logins() != 2 {
		t.Errorf("browser opened %d times, %d logins; want 2 and 2", opened.Load(), srv.Logins())
	}
}

// TestSSEOAuthNonInteractiveNeedsLogin: without a stored login and a
// browser, a legacy SSE server fails the connect with the same error as a
// streamable one, whether the config names the transport or the bare URL
// falls back to it; nothing is registered on the user's behalf.
func TestSSEOAuthNonInteractiveNeedsLogin(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{SSE: true})
	for _, tr := range []mcpconfig.Transport{mcpconfig.TransportSSE, ""} {
		_, err := Connect(context.Background(), mcpconfig.Server{Name: "docs", URL: srv.URL, Transport: tr},
			WithOAuth(&oauth.Options{Store: oauth.NewTokenStore(t.TempDir()), OpenURL: noBrowser(t)}))
		var lr *oauth.LoginRequiredError
		if !errors.As(err, &lr) || err.Error() != "MCP server docs ("+srv.URL+") needs a login; run: agentapp mcp login docs" {
			t.Errorf("transport %q: err = %v, want a *oauth.LoginRequiredError", tr, err)
		}
	}
	if srv.Logins() != 0 || srv.LastAuthorize() != nil || srv.Registrations() != 0 {
		t.Errorf("a login was attempted: %d registrations", srv.Registrations())
	}
}

// TestSSEOAuthFallbackLogsInOnce: a bare URL of a legacy server that
// guards every request asks for the login on the streamable attempt
// already; the SSE attempt after it goes on with that login instead of
// sending the user to the browser a second time (no token store here,
// so nothing else could carry it over).
func TestSSEOAuthFallbackLogsInOnce(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{SSE: true})
	var opened atomic.Int32
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "legacy", URL: srv.URL},
		WithOAuth(&oauth.Options{Interactive: true, Prompt: &strings.Builder{}, OpenURL: countingBrowser(&opened)}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	callWhoami(t, b)
	if opened.Load() != 1 || srv.Logins() != 1 || srv.Requests(http.MethodGet) != 1 {
		t.Errorf("browser opened %d times, %d logins, %d event streams; want 1 of each", opened.Load(), srv.Logins(), srv.Requests(http.MethodGet))
	}
}

// TestSSEOAuthRevokedMidSession: a POST refused with 401 in the middle of
// a session (the grant was withdrawn) logs in again for the server's URL
// and the call goes through; without a browser the call fails and says
// which command logs in.
func TestSSEOAuthRevokedMidSession(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{SSE: true})
	store := oauth.NewTokenStore(t.TempDir())
	var opened atomic.Int32
	cfg := mcpconfig.Server{Name: "legacy", URL: srv.URL, Transport: mcpconfig.TransportSSE}
	b, err := Connect(context.Background(), cfg, WithOAuth(&oauth.Options{
		Store: store, Interactive: true, Prompt: &strings.Builder{}, OpenURL: countingBrowser(&opened)}))
	if err != nil {
		t.Fatal(err)
	}
	callWhoami(t, b)
	srv.Revoke()
	callWhoami(t, b)
	_ = b.Close()
	if opened.Load() != 2 || srv.Logins() != 2 || srv.Requests(http.MethodGet) != 1 {
		t.Errorf("browser opened %d times, %d logins, %d event streams; want 2, 2 and 1 (the session kept)", opened.Load(), srv.Logins(), srv.Requests(http.MethodGet))
	}

	b, err = Connect(context.Background(), cfg, WithOAuth(&oauth.Options{Store: store, OpenURL: noBrowser(t)}))
	if err != nil {
		t.Fatalf("connect with the stored login: %v", err)
	}
	defer b.Close()
	callWhoami(t, b)
	srv.Revoke()
	_, err = b.Tools()[0].Execute(context.Background(), []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "needs a login; run: agentapp mcp login legacy") {
		t.Errorf("call after the grant was withdrawn: %v, want the command that logs in", err)
	}
	if srv.Logins() != 2 {
		t.Errorf("%d logins without a browser", srv.Logins()-2)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// portFree reports whether nothing listens on the loopback port.
func portFree(port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}
