package web

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCheckHostTrailingDot: the web front end and serve --http read Host
// with one rule (internal/trust); "localhost." is localhost, which the
// web's own copy of the rule refused with 403.
func TestCheckHostTrailingDot(t *testing.T) {
	h := checkHost(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	for host, want := range map[string]int{
		"localhost.:8080":     http.StatusOK,
		"LOCALHOST:8080":      http.StatusOK,
		"app.localhost.:8080": http.StatusOK,
		"[::1]:8080":          http.StatusOK,
		"evil.example:8080":   http.StatusForbidden,
	} {
		r := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		r.Host = host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(local)))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
}

// TestBlankAPIKeyFailsClosed: an API key that is only white space refuses
// every client, as a blank serve --http token does; it used to leave /v1
// open, as if no key had been set.
func TestBlankAPIKeyFailsClosed(t *testing.T) {
	s := &Server{opts: Options{APIKeys: []string{"   "}}}
	h := s.apiKeyOnly(func(w http.ResponseWriter, r *http.Request) {})
	for _, hdr := range []string{"", "Bearer ", "Bearer    "} {
		r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
		if hdr != "" {
			r.Header.Set("Authorization", hdr)
		}
		w := httptest.NewRecorder()
		h(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("%q: %d, want 401", hdr, w.Code)
		}
	}
	// The scheme's name is read in any case, as serve --http reads it.
	s = &Server{opts: Options{APIKeys: []string{"sk-one"}}}
	h = s.apiKeyOnly(func(w http.ResponseWriter, r *http.Request) {})
	r := httptest.NewRequest(http.MethodGet, "/v1/models", nil)
	r.Header.Set("Authorization", "bearer sk-one")
	w := httptest.NewRecorder()
	h(w, r)
	if w.Code != http.StatusOK {
		t.Errorf("bearer (lower case): %d, want 200", w.Code)
	}
}

// TestAppendEvent: one writer frames both kinds of event, and data with
// line breaks stays one event whose data a client reads back whole.
func TestAppendEvent(t *testing.T) {
	for _, c := range []struct{ event, data, want string }{
		{"token", `{"text":"hi"}`, "event: token\ndata: {\"text\":\"hi\"}\n\n"},
		{"", "[DONE]", "data: [DONE]\n\n"},
		{"", "a\nb\r\nc\rd", "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"", "", "data: \n\n"},
	} {
		if got := string(appendEvent(nil, c.event, []byte(c.data))); got != c.want {
			t.Errorf("appendEvent(%q, %q) = %q, want %q", c.event, c.data, got, c.want)
		}
	}
}
