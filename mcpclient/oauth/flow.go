// Package oauth logs an MCP client in to an HTTP server with OAuth 2.1:
// the glue around the SDK's auth package that gives it a browser, a
// loopback redirect, a place to keep tokens (TokenStore) and a connect
// timeout that stops while the user is in the browser (Clock). The SDK's
// streamable transport takes a *Flow as its OAuth handler; the legacy SSE
// transport, which takes none, gets a Transport in front of its client.
package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// defaultLoginTimeout bounds the browser step of an OAuth login: the time
// the user has to approve the login before the attempt gives up.
const defaultLoginTimeout = 5 * time.Minute

// maxAuthorizations bounds the logins one connection may ask for. The SDK
// retries each request once after a login; a server that keeps asking for
// more scopes (step-up) on request after request would otherwise send the
// user to the browser without end.
const maxAuthorizations = 4

// authRequestTimeout bounds each request to an authorization server
// (metadata, registration, token, refresh). A refresh runs outside any
// connect or call deadline, in the SDK's token source, so the client's
// own timeout is its only bound.
const authRequestTimeout = 30 * time.Second

// Options turns on OAuth 2.1 for HTTP servers, streamable or legacy
// SSE: on a 401 the bridge discovers the server's authorization server and
// logs in with an authorization code and PKCE, as the MCP authorization
// spec describes.
// The SDK's auth package does the protocol; this is the glue that gives
// it a browser, a loopback redirect and a place to keep tokens.
type Options struct {
	// Store keeps logins between runs and is where a stored token is
	// found and refreshed; nil keeps a login for one connection only (a
	// restart of the server asks again).
	Store *TokenStore
	// Interactive allows the browser step. Without it a server that needs
	// a new login fails the connect with a *LoginRequiredError (the chat:
	// it must start without waiting on a browser), while a stored token,
	// refreshed when it expired, is still used.
	Interactive bool
	// Prompt receives the login URL, which is always printed so that a
	// user whose browser did not open can copy it; nil means os.Stderr.
	Prompt io.Writer
	// OpenURL opens the login URL; nil means openBrowser ($BROWSER, else
	// the platform's opener).
	OpenURL func(ctx context.Context, url string) error
	// LoginTimeout bounds the browser step; 0 means defaultLoginTimeout.
	LoginTimeout time.Duration
	// LoginHint returns the command a *LoginRequiredError tells the user
	// to run for a server; nil means "agentapp mcp login NAME" (the URL
	// when the server has no name of its own).
	LoginHint func(mcpconfig.Server) string
}

// LoginRequiredError is a connect that failed because the server wants an
// OAuth login and the bridge may not open a browser. LoginHint is the
// command that logs in.
type LoginRequiredError struct {
	Server string
	URL    string
	hint   string
}

func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("MCP server %s (%s) needs a login; run: %s", e.Server, e.URL, e.hint)
}

// LoginHint returns the command to run to log in, e.g. "agentapp mcp login docs".
func (e *LoginRequiredError) LoginHint() string { return e.hint }

// Flow is one connection's OAuth handler: the SDK's authorization
// code handler, fed with the stored login and saving what it obtains,
// behind a gate that refuses the browser step in non-interactive use.
type Flow struct {
	server  mcpconfig.Server
	opts    *Options
	logger  *slog.Logger
	inner   *auth.AuthorizationCodeHandler
	cb      *loopback // nil when not interactive
	clock   *Clock
	count   atomic.Int32
	needed  atomic.Pointer[LoginRequiredError]
	timeout time.Duration
	// failed is the browser step's failure (no answer in time, a refusal):
	// the SDK would ask again for its next request (initialize after the
	// discover probe), and the user would wait out the limit twice.
	failed atomic.Pointer[error]
}

var _ auth.OAuthHandler = (*Flow)(nil)

// NewAuthClient is the client that carries a login's requests to the
// authorization server over base: bounded by authRequestTimeout, and with
// the legacy issuer rule applied (see legacyIssuer).
func NewAuthClient(base http.RoundTripper) *http.Client {
	return &http.Client{Transport: &legacyIssuer{base: base}, Timeout: authRequestTimeout}
}

// Needed is the login a non-interactive flow refused to start, or nil:
// the reason to give for a failed connect rather than its symptom.
func (f *Flow) Needed() *LoginRequiredError { return f.needed.Load() }

// NewFlow prepares the OAuth handler of one connection to cfg's
// server. hc carries the requests to the authorization server. The flow
// starts from tokens when it is not nil, else from the stored login.
func NewFlow(cfg *mcpconfig.Server, o *Options, logger *slog.Logger, hc *http.Client, clock *Clock, tokens oauth2.TokenSource) (*Flow, error) {
	f := &Flow{server: *cfg, opts: o, logger: logger, clock: clock, timeout: o.LoginTimeout}
	if f.timeout <= 0 {
		f.timeout = defaultLoginTimeout
	}
	oc := cfg.OAuth
	if oc == nil {
		oc = &mcpconfig.OAuth{}
	}
	redirect := "http://127.0.0.1/callback" // never used: no browser step
	if o.Interactive {
		cb, err := newLoopback(oc.CallbackPort)
		if err != nil {
			return nil, err
		}
		f.cb = cb
		redirect = cb.redirectURL()
	}
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: f.fetch,
		RequestRefreshToken:      true,
		Client:                   hc,
		NewTokenSource:           f.newTokenSource,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    "agentapp",
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		},
	}
	// A pre-registered client comes first. The SDK would try a client ID
	// metadata document before it, so the document is offered only when
	// there is no client ID.
	if oc.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: oc.ClientID}
		if oc.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: oc.ClientSecret}
		}
		hcfg.PreregisteredClient = pc
	} else if oc.ClientMetadataURL != "" {
		hcfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: oc.ClientMetadataURL}
	}
	if len(oc.Scopes) > 0 {
		scopes := slices.Clone(oc.Scopes)
		hcfg.ScopeFilter = func([]string) []string { return slices.Clone(scopes) }
	}
	if tokens != nil {
		hcfg.InitialTokenSource = tokens
	} else if o.Store != nil {
		l, err := o.Store.load(cfg.URL)
		if err != nil {
			// A damaged file is replaced by the next login; the user is
			// told, without its contents.
			logger.Warn("ignoring the stored OAuth login", "server", cfg.Name, "reason", err.Error())
		}
		if l != nil {
			hcfg.InitialTokenSource = f.saving(l.config(), l.Token, context.WithValue(context.Background(), oauth2.HTTPClient, hc))
		}
	}
	inner, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("MCP server %s: OAuth settings: %w", cfg.Name, err)
	}
	f.inner = inner
	return f, nil
}

func (l *storedLogin) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     l.ClientID,
		ClientSecret: l.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: l.AuthURL, TokenURL: l.TokenURL, AuthStyle: l.AuthStyle},
		Scopes:       l.Scopes,
	}
}

func (f *Flow) hint() string {
	if f.opts.LoginHint != nil {
		return f.opts.LoginHint(f.server)
	}
	return "agentapp mcp login " + f.server.Name
}

func (f *Flow) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return f.inner.TokenSource(ctx)
}

// Authorize runs the login a 401 (or a 403 insufficient_scope) asks for.
func (f *Flow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if !f.opts.Interactive && wantsLogin(resp) {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if !bearerChallenge(resp) {
			// A server that names no OAuth login probably wants a static
			// token: "log in" would be the wrong advice.
			return errNoChallenge
		}
		e := &LoginRequiredError{Server: f.server.Name, URL: f.server.URL, hint: f.hint()}
		f.needed.Store(e)
		return e
	}
	if e := f.failed.Load(); e != nil && wantsLogin(resp) {
		_ = resp.Body.Close()
		return *e
	}
	if wantsLogin(resp) && f.count.Add(1) > maxAuthorizations {
		_ = resp.Body.Close()
		return fmt.Errorf("the server still refuses access after %d logins (it may want scopes the authorization server does not grant); check the server's scopes or set oauth.scopes", maxAuthorizations)
	}
	return f.inner.Authorize(ctx, req, resp)
}

var errNoChallenge = errors.New("the 401 carries no Bearer challenge, so the server names no OAuth login")

// bearerChallenge reports whether resp challenges for a Bearer token, as
// OAuth-protected MCP servers do.
func bearerChallenge(resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// wantsLogin reports whether resp asks for a (new) login: a 401, or a 403
// whose challenge says the token lacks scopes. Other 403s are answers.
func wantsLogin(resp *http.Response) bool {
	if resp.StatusCode == http.StatusUnauthorized {
		return true
	}
	if resp.StatusCode != http.StatusForbidden {
		return false
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// newTokenSource is called by the SDK after a login: it stores the login
// and returns a source that stores each refreshed token too.
func (f *Flow) newTokenSource(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	ts := f.saving(cfg, tok, ctx)
	f.save(cfg, tok)
	return ts, nil
}

func (f *Flow) save(cfg *oauth2.Config, tok *oauth2.Token) {
	if f.opts.Store == nil {
		return
	}
	l := &storedLogin{
		Server: f.server.URL, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle,
		Scopes: cfg.Scopes, Token: tok,
	}
	if err := f.opts.Store.save(l); err != nil {
		f.logger.Warn("the OAuth login could not be saved; the next run will ask again", "server", f.server.Name, "reason", err.Error())
	}
}

// saving returns a token source over cfg that refreshes tok when it
// expires and stores every new token, so that the refresh token a server
// rotates is not lost with the process.
func (f *Flow) saving(cfg *oauth2.Config, tok *oauth2.Token, ctx context.Context) oauth2.TokenSource {
	return &savingSource{src: cfg.TokenSource(ctx, tok), last: tok.AccessToken, save: func(t *oauth2.Token) { f.save(cfg, t) }}
}

type savingSource struct {
	src  oauth2.TokenSource
	mu   sync.Mutex
	last string
	save func(*oauth2.Token)
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err != nil {
		return nil, redactTokenError(err)
	}
	s.mu.Lock()
	changed := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(t)
	}
	return t, nil
}

// redactTokenError keeps what the user needs of a failed refresh (the
// OAuth error code and status) and drops the response body, which could
// echo a token.
func redactTokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if re.ErrorCode == "" {
			return fmt.Errorf("the token endpoint refused to refresh the login (HTTP %d); log in again", status)
		}
		// The SDK recognises invalid_grant (an expired refresh token)
		// and logs in again: keep the type and code for it.
		return &oauth2.RetrieveError{Response: &http.Response{StatusCode: status}, ErrorCode: re.ErrorCode,
			ErrorDescription: "the token endpoint refused the refresh"}
	}
	return err
}

// fetch is the browser step: print and open the authorization URL, and
// wait for the redirect to the loopback server.
func (f *Flow) fetch(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	if f.cb == nil {
		e := &LoginRequiredError{Server: f.server.Name, URL: f.server.URL, hint: f.hint()}
		f.needed.Store(e)
		return nil, e
	}
	u, err := url.Parse(args.URL)
	if err != nil {
		return nil, fmt.Errorf("the authorization URL the SDK built is invalid: %v", err)
	}
	state := u.Query().Get("state")
	// The connect timeout is for the server, not for the user reading a
	// login page; it starts again once the browser step is over.
	f.clock.pause()
	defer f.clock.resume()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()

	w := f.opts.Prompt
	if w == nil {
		w = os.Stderr
	}
	fmt.Fprintf(w, "agentapp: MCP server %s wants you to log in; open this URL in your browser (waiting up to %s):\n  %s\n", f.server.Name, f.timeout, args.URL)
	open := f.opts.OpenURL
	if open == nil {
		open = openBrowser
	}
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		if err := open(ctx, args.URL); err != nil && ctx.Err() == nil {
			fmt.Fprintf(w, "agentapp: warning: could not open a browser (%v); open the URL above yourself\n", err)
		}
	}()
	res, err := f.cb.wait(ctx, state)
	cancel()
	<-opened
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no login within %s: the browser did not come back to %s; run %q to try again", f.timeout, f.cb.redirectURL(), f.hint())
		}
		f.failed.Store(&err)
		return nil, err
	}
	return res, nil
}

func (f *Flow) Close() {
	if f.cb != nil {
		f.cb.close()
	}
}

// Clock is a connect timeout that can be paused: it cancels its
// context with errConnectTimeout when it runs out, unless it is paused
// (during a login in the browser), and starts afresh on resume.
type Clock struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
	paused int
}

var errConnectTimeout = errors.New("connect timeout")

func NewClock(parent context.Context, d time.Duration) (context.Context, *Clock) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &Clock{d: d, cancel: cancel}
	c.timer = time.AfterFunc(d, func() { cancel(errConnectTimeout) })
	return ctx, c
}

func (c *Clock) pause() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.paused++
	c.timer.Stop()
}

func (c *Clock) resume() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused--; c.paused == 0 {
		c.timer.Reset(c.d)
	}
}

func (c *Clock) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer.Stop()
	c.cancel(nil)
}

// TimedOut reports whether ctx (from NewClock) ended by the clock.
func TimedOut(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errConnectTimeout) || errors.Is(ctx.Err(), context.DeadlineExceeded)
}
