package agentmcp

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// headerTransport adds the configured headers and bearer token to every
// request to a streamable HTTP server, and remembers a 401 so the error the
// user sees can say what to fix.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	token   string
	// version is the negotiated protocol version once known. The SDK's HTTP
	// connection sets the Mcp-Protocol-Version header from session state it
	// only passes to connections of its own package; ours wraps it (to keep
	// schemas byte for byte), so the header is set here instead.
	version      atomic.Pointer[string]
	unauthorized atomic.Bool
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	if v := t.version.Load(); v != nil && req.Header.Get("Mcp-Protocol-Version") == "" {
		req.Header.Set("Mcp-Protocol-Version", *v)
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusUnauthorized {
		t.unauthorized.Store(true)
	}
	return resp, err
}

// explain rewrites an error of a request to the server when the server
// answered 401, which the SDK reports only as a generic failure.
func (t *headerTransport) explain(err error) error {
	if err == nil || !t.unauthorized.Load() {
		return err
	}
	what := "no bearer token was sent; set token (or an Authorization header) in the server's config"
	if t.token != "" || t.headers["Authorization"] != "" {
		what = "the bearer token was refused; check that it is the right one and not expired"
	}
	return fmt.Errorf("the server answered 401 Unauthorized: %s (%w)", what, err)
}

// newHTTPClient returns a client of its own for one server: its idle
// connections are closed with the bridge instead of lingering in the shared
// default transport.
func newHTTPClient(cfg *ServerConfig) (*http.Client, *headerTransport) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	ht := &headerTransport{base: base, headers: cfg.Headers, token: cfg.Token}
	return &http.Client{Transport: ht}, ht
}
