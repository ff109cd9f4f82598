package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/oauthtest"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient/oauth"
	"github.com/agentapp/agentapp/mcpconfig"
)

// noBrowser fails the test if a login tries to open a browser.
func noBrowser(t *testing.T) func(context.Context, string) error {
	return func(context.Context, string) error {
		t.Error("a browser was opened; the login should have been silent")
		return errors.New("no browser in this test")
	}
}

func callWhoami(t *testing.T, b *Bridge) {
	t.Helper()
	tools := b.Tools()
	if len(tools) != 1 || tools[0].Name != "whoami" {
		t.Fatalf("tools = %v", toolNames(b))
	}
	out, err := tools[0].Execute(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	if s, _ := agent.FormatOutput(out); s != "logged in" {
		t.Errorf("whoami = %q", s)
	}
}

// TestOAuthLoginRefreshLogout is the life of a login: the first connect
// opens the browser (here a client that follows the redirects), stores the
// tokens in a 0600 file in a 0700 folder; the next connect, with an
// expired access token and no browser allowed, refreshes it silently and
// stores the new one; deleting the login leaves a connect that needs a
// login again. No token appears in the logs or in any error.
func TestOAuthLoginRefreshLogout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 1})
	dir := t.TempDir()
	store := oauth.NewTokenStore(dir)
	logger, logs := testkit.NewLogger()
	var prompt strings.Builder
	var opened atomic.Int32
	cfg := mcpconfig.Server{Name: "protected", URL: srv.URL}

	b, err := Connect(context.Background(), cfg, WithLogger(logger), WithOAuth(&oauth.Options{
		Store: store, Interactive: true, Prompt: &prompt,
		OpenURL: func(ctx context.Context, u string) error { opened.Add(1); return oauthtest.Browse(ctx, u) },
	}))
	if err != nil {
		t.Fatal(err)
	}
	callWhoami(t, b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if opened.Load() != 1 || srv.Logins() != 1 {
		t.Fatalf("browser opened %d times, %d logins; want 1 and 1", opened.Load(), srv.Logins())
	}
	if !strings.Contains(prompt.String(), "open this URL") || !strings.Contains(prompt.String(), "/authorize?") {
		t.Errorf("the login URL was not printed:\n%s", prompt.String())
	}
	file := store.Path(srv.URL)
	for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
	first, _ := os.ReadFile(file)

	b, err = Connect(context.Background(), cfg, WithLogger(logger), WithOAuth(&oauth.Options{Store: store, OpenURL: noBrowser(t)}))
	if err != nil {
		t.Fatalf("connect with the stored login: %v", err)
	}
	callWhoami(t, b)
	_ = b.Close()
	if srv.Refreshes() == 0 || srv.Logins() != 1 {
		t.Errorf("%d refreshes and %d logins; want the expired token refreshed without a new login", srv.Refreshes(), srv.Logins())
	}
	second, _ := os.ReadFile(file)
	if string(first) == string(second) {
		t.Error("the refreshed token was not stored")
	}

	if had, err := store.Delete(srv.URL); !had || err != nil {
		t.Fatalf("Delete = %v, %v", had, err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the token file survived the logout: %v", err)
	}
	_, err = Connect(context.Background(), cfg, WithLogger(logger), WithOAuth(&oauth.Options{Store: store, OpenURL: noBrowser(t)}))
	var lr *oauth.LoginRequiredError
	if !errors.As(err, &lr) {
		t.Fatalf("after logout: %v, want a *oauth.LoginRequiredError", err)
	}
	var hint interface{ LoginHint() string }
	if !errors.As(err, &hint) || hint.LoginHint() != "agentapp mcp login protected" {
		t.Errorf("login hint of %v", err)
	}

	text := logs.String() + prompt.String() + err.Error()
	for _, tok := range srv.Issued() {
		if strings.Contains(text, tok) {
			t.Errorf("token %s appears in the logs, prompt or errors:\n%s", tok, text)
		}
	}
}

// TestOAuthNonInteractiveNeedsLogin: without a stored login and without
// the right to open a browser, the connect fails at once with the command
// to run, and no client is registered on the user's behalf.
func TestOAuthNonInteractiveNeedsLogin(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	start := time.Now()
	_, err := Connect(context.Background(), mcpconfig.Server{Name: "docs", URL: srv.URL},
		WithOAuth(&oauth.Options{Store: oauth.NewTokenStore(t.TempDir()), OpenURL: noBrowser(t), LoginHint: func(s mcpconfig.Server) string { return "agentapp mcp login --config mcp.json " + s.Name }}))
	var lr *oauth.LoginRequiredError
	if !errors.As(err, &lr) {
		t.Fatalf("err = %v, want a *oauth.LoginRequiredError", err)
	}
	if lr.LoginHint() != "agentapp mcp login --config mcp.json docs" || !strings.Contains(err.Error(), "needs a login; run: agentapp mcp login --config mcp.json docs") {
		t.Errorf("err = %v, hint %q", err, lr.LoginHint())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the refusal took %s", d)
	}
	if srv.Logins() != 0 || srv.LastAuthorize() != nil || srv.Registrations() != 0 {
		t.Errorf("a login was attempted: %d registrations", srv.Registrations())
	}
}

// TestOAuthScopesAndResource: the configured scopes replace the
// challenge's, the resource parameter names the server, and a stale
// callback (wrong state) is refused while the login goes on.
func TestOAuthScopesAndResource(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "tickets:read", ScopesSupported: []string{"tickets:read", "offline_access"}})
	var stale atomic.Int32
	open := func(ctx context.Context, u string) error {
		redirect := u[strings.Index(u, "redirect_uri=")+len("redirect_uri="):]
		redirect, _, _ = strings.Cut(redirect, "&")
		redirect = strings.NewReplacer("%3A", ":", "%2F", "/").Replace(redirect)
		resp, err := http.Get(redirect + "?code=planted&state=not-the-state")
		if err == nil {
			if resp.StatusCode == http.StatusBadRequest {
				stale.Add(1)
			}
			resp.Body.Close()
		}
		return oauthtest.Browse(ctx, u)
	}
	for _, c := range []struct {
		scopes []string
		want   string
	}{
		{nil, "tickets:read offline_access"},
		{[]string{"tickets:write"}, "tickets:write offline_access"},
	} {
		cfg := mcpconfig.Server{Name: "t", URL: srv.URL, OAuth: &mcpconfig.OAuth{Scopes: c.scopes}}
		b, err := Connect(context.Background(), cfg, WithOAuth(&oauth.Options{Interactive: true, Prompt: &strings.Builder{}, OpenURL: open}))
		if err != nil {
			t.Fatal(err)
		}
		_ = b.Close()
		q := srv.LastAuthorize()
		got := strings.Fields(q.Get("scope"))
		slices.Sort(got)
		want := strings.Fields(c.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("config scopes %v: requested %q, want %q", c.scopes, got, c.want)
		}
		if q.Get("resource") != srv.URL {
			t.Errorf("resource = %q", q.Get("resource"))
		}
	}
	if stale.Load() != 2 {
		t.Errorf("%d of 2 planted callbacks were refused", stale.Load())
	}
}

// TestOAuthResourceMismatch: metadata naming another resource is refused;
// the client never sends the user to that authorization server.
func TestOAuthResourceMismatch(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{Resource: "https://elsewhere.example/mcp"})
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "m", URL: srv.URL, ConnectTimeout: 10 * time.Second},
		WithOAuth(&oauth.Options{Interactive: true, Prompt: &strings.Builder{}, OpenURL: func(ctx context.Context, u string) error {
			if strings.Contains(u, "elsewhere") {
				t.Errorf("the login went to the mismatching resource: %s", u)
			}
			return oauthtest.Browse(ctx, u)
		}}))
	if err == nil {
		_ = b.Close()
	}
	// Either the connect fails, or the SDK fell back to the server's own
	// URL as the resource (the 2025-03-26 rules); the mismatching one is
	// never used.
	if q := srv.LastAuthorize(); q != nil && q.Get("resource") != srv.URL {
		t.Errorf("resource %q sent to the authorization server", q.Get("resource"))
	}
}

// TestOAuthLoginTimeout: a browser that never comes back ends the login
// after the limit, with a message that says so and what to run.
func TestOAuthLoginTimeout(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{})
	var opened atomic.Int32
	_, err := Connect(context.Background(), mcpconfig.Server{Name: "slow", URL: srv.URL, ConnectTimeout: 100 * time.Millisecond},
		WithOAuth(&oauth.Options{Interactive: true, Prompt: &strings.Builder{}, LoginTimeout: 300 * time.Millisecond,
			OpenURL: func(context.Context, string) error { opened.Add(1); return nil }}))
	// One browser step per connect, not one per request the SDK sends.
	if opened.Load() != 1 {
		t.Errorf("the browser was opened %d times", opened.Load())
	}
	if err == nil {
		t.Fatal("connected without a login")
	}
	// The connect timeout (100ms) is shorter than the login's limit: it
	// must not cut the browser step short.
	if !strings.Contains(err.Error(), "no login within 300ms") || !strings.Contains(err.Error(), `"agentapp mcp login slow"`) {
		t.Errorf("err = %v", err)
	}
}

// TestOAuthNonInteractiveStaticTokenServer: a 401 without a Bearer
// challenge is not taken for an OAuth login (the server probably wants a
// static token), so the chat says to set the token, not to log in; the
// same on the legacy SSE transport (whose GET is refused first).
func TestOAuthNonInteractiveStaticTokenServer(t *testing.T) {
	ts, _ := httpTestServer(t, "s3cret")
	for _, tr := range []mcpconfig.Transport{"", mcpconfig.TransportSSE} {
		_, err := Connect(context.Background(), mcpconfig.Server{Name: "web", URL: ts.URL, Transport: tr},
			WithOAuth(&oauth.Options{Store: oauth.NewTokenStore(t.TempDir()), OpenURL: noBrowser(t)}))
		var lr *oauth.LoginRequiredError
		if err == nil || errors.As(err, &lr) || !strings.Contains(err.Error(), `the server answered 401 Unauthorized: no bearer token was sent, and logging in with OAuth did not give access`) {
			t.Errorf("transport %q: err = %v", tr, err)
		}
	}
}
