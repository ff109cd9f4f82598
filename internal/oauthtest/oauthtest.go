// Package oauthtest runs an MCP server behind OAuth 2.1 in the test's
// process: protected-resource metadata, authorization-server metadata,
// dynamic client registration, an authorization endpoint that approves at
// once (checking PKCE and the resource parameter), and a token endpoint
// that issues and refreshes tokens. Tests of the client's login use it in
// place of a hosted server.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options shapes the server; the zero value is a server that supports
// dynamic registration and issues hour-long tokens.
type Options struct {
	// ExpiresIn is the lifetime of an access token in seconds; 0 means an
	// hour. The oauth2 package treats a token as expired ten seconds
	// early, so 1 makes every stored token due for a refresh.
	ExpiresIn int
	// ScopesSupported goes into both metadata documents.
	ScopesSupported []string
	// ChallengeScope is the scope parameter of the 401's challenge.
	ChallengeScope string
	// Resource overrides the resource the protected-resource metadata
	// names (a mismatch the client must refuse).
	Resource string
	// SSE serves MCP over the legacy HTTP+SSE transport only (the GET
	// opens the stream, POSTs go to the endpoint it names), as hosted
	// servers that never moved to streamable HTTP do. The bearer check
	// guards both.
	SSE bool
}

// Server is a running OAuth-protected MCP server.
type Server struct {
	// URL is the MCP endpoint.
	URL  string
	opts Options
	ts   *httptest.Server

	mu        sync.Mutex
	access    map[string]bool
	refresh   map[string]bool
	codes     map[string]string // code -> code_challenge
	issued    []string
	logins    int
	registers int
	refreshes int
	authorize url.Values
	n         int
	requests  map[string]int // by method, the requests let through
}

// New starts a server; it stops when the test ends.
func New(t testing.TB, opts Options) *Server {
	s := &Server{opts: opts, access: map[string]bool{}, refresh: map[string]bool{}, codes: map[string]string{}, requests: map[string]int{}}
	ms := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	ms.AddTool(&mcp.Tool{Name: "whoami", Description: "Says who is logged in.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged in"}}}, nil
		})
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	if opts.SSE {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return ms }, nil)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		ok := s.access[tok]
		s.mu.Unlock()
		if !ok {
			c := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.ts.URL)
			if opts.ChallengeScope != "" {
				c += fmt.Sprintf(`, scope="%s"`, opts.ChallengeScope)
			}
			w.Header().Set("WWW-Authenticate", c)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		s.requests[r.Method]++
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		res := s.URL
		if opts.Resource != "" {
			res = opts.Resource
		}
		writeJSON(w, map[string]any{"resource": res, "authorization_servers": []string{s.ts.URL}, "scopes_supported": opts.ScopesSupported})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{
			"issuer":                                s.ts.URL,
			"authorization_endpoint":                s.ts.URL + "/authorize",
			"token_endpoint":                        s.ts.URL + "/token",
			"registration_endpoint":                 s.ts.URL + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
			"scopes_supported":                      opts.ScopesSupported,
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		s.mu.Lock()
		s.registers++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "registered-client", "redirect_uris": m["redirect_uris"], "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" {
			http.Error(w, "PKCE S256 required", http.StatusBadRequest)
			return
		}
		if q.Get("resource") != s.URL {
			http.Error(w, "wrong resource "+q.Get("resource"), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = q.Get("code_challenge")
		s.authorize = q
		s.mu.Unlock()
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, "bad redirect_uri", http.StatusBadRequest)
			return
		}
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			ch, ok := s.codes[r.PostForm.Get("code")]
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != ch {
				oauthError(w, "invalid_grant")
				return
			}
			delete(s.codes, r.PostForm.Get("code"))
			s.logins++
		case "refresh_token":
			if !s.refresh[r.PostForm.Get("refresh_token")] {
				oauthError(w, "invalid_grant")
				return
			}
			delete(s.refresh, r.PostForm.Get("refresh_token"))
			s.refreshes++
		default:
			oauthError(w, "unsupported_grant_type")
			return
		}
		s.n++
		at, rt := fmt.Sprintf("secret-access-%d", s.n), fmt.Sprintf("secret-refresh-%d", s.n)
		s.access[at], s.refresh[rt] = true, true
		s.issued = append(s.issued, at, rt)
		exp := opts.ExpiresIn
		if exp == 0 {
			exp = 3600
		}
		writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": exp, "refresh_token": rt})
	})
	s.ts = httptest.NewServer(mux)
	s.URL = s.ts.URL + "/mcp"
	t.Cleanup(s.ts.Close)
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func oauthError(w http.ResponseWriter, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code})
}

// Logins and Refreshes count the codes exchanged and the refreshes done.
func (s *Server) Logins() int    { s.mu.Lock(); defer s.mu.Unlock(); return s.logins }
func (s *Server) Refreshes() int { s.mu.Lock(); defer s.mu.Unlock(); return s.refreshes }

// Requests counts the requests of the given method that carried a valid
// token and reached the MCP handler.
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method]
}

// Registrations counts the clients registered dynamically.
func (s *Server) Registrations() int { s.mu.Lock(); defer s.mu.Unlock(); return s.registers }

// Issued returns every access and refresh token the server handed out.
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// LastAuthorize returns the query of the latest authorization request.
func (s *Server) LastAuthorize() url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authorize
}

// Revoke forgets every token, as a server does when a grant is withdrawn.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.access, s.refresh = map[string]bool{}, map[string]bool{}
}

// Browse is a browser that approves at once: it fetches the URL and
// follows the redirects, as far as the client's loopback callback.
func Browse(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the login page answered %s", resp.Status)
	}
	return nil
}
