package oauth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
)

// TestSSEOAuthBodyNotReplayable: a refused request whose body cannot be
// read again is not retried after a login, and the error says why.
func TestSSEOAuthBodyNotReplayable(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer ts.Close()
	ot := newTestOAuthTransport(t, ts.URL)
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(`{}`))
	req.GetBody = nil
	req.Body = struct{ readCloser }{req.Body}
	resp, err := ot.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "cannot be sent again after a login because its body cannot be read twice") || posts.Load() != 1 {
		t.Errorf("err = %v after %d POSTs; want one POST and the reason", err, posts.Load())
	}
	if ot.flow.Needed() != nil {
		t.Error("a login was asked for although the request could not be repeated")
	}
}

type readCloser interface {
	Read([]byte) (int, error)
	Close() error
}

// TestSSEOAuthForbidden: a 403 goes to the flow as on streamable HTTP,
// where one without insufficient_scope asks for no login: the request is
// sent once more, as the SDK's streamable transport does, and the second
// answer is the caller's.
func TestSSEOAuthForbidden(t *testing.T) {
	var posts atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer ts.Close()
	ot := newTestOAuthTransport(t, ts.URL)
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/?sessionid=1", strings.NewReader(`{}`))
	resp, err := ot.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || posts.Load() != 2 || ot.flow.Needed() != nil {
		t.Errorf("status %d after %d POSTs; want the second 403 and no login asked for", resp.StatusCode, posts.Load())
	}
}

// newTestOAuthTransport is an Transport for the server at url with a
// login flow of default options, closed when the test ends.
func newTestOAuthTransport(t *testing.T, url string) *Transport {
	t.Helper()
	cfg := mcpconfig.Server{Name: "s", URL: url}
	discard, _ := testkit.NewLogger()
	flow, err := NewFlow(&cfg, &Options{}, discard, http.DefaultClient, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(flow.Close)
	ot, err := NewTransport(http.DefaultTransport, flow)
	if err != nil {
		t.Fatal(err)
	}
	return ot
}
