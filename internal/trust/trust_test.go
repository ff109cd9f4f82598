package trust

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost":             true,
		"LOCALHOST":             true,
		"localhost.":            true, // the root's dot names the same host
		"app.localhost":         true,
		"App.Localhost.":        true,
		"127.0.0.1":             true,
		"127.8.9.10":            true,
		"::1":                   true,
		"[::1]":                 true,
		"::ffff:127.0.0.1":      true,
		"":                      false,
		"localhost.example.com": false,
		"notlocalhost":          false,
		"127.0.0.1.evil.com":    false,
		"10.0.0.1":              false,
		"0.0.0.0":               false,
		"::":                    false,
		"example.com":           false,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
	for addr, want := range map[string]bool{
		"localhost.:8080":  true,
		"[::1]:80":         true,
		"127.0.0.1:0":      true,
		":8080":            false,
		"0.0.0.0:8080":     false,
		"example.com:8080": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
	if !IsLocalhostSubdomain("a.localhost.") || IsLocalhostSubdomain("localhost") {
		t.Error("IsLocalhostSubdomain: a name under .localhost, not localhost itself")
	}
}

// onLoopback is a request as a server listening on 127.0.0.1 sees it.
func onLoopback(host string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://x/mcp", nil)
	r.Host = host
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, local))
}

func TestHostProblem(t *testing.T) {
	for host, refused := range map[string]bool{
		"localhost:8080":         false,
		"localhost.:8080":        false,
		"127.0.0.1:8080":         false,
		"[::1]:8080":             false,
		"app.localhost":          false,
		"evil.example:8080":      true,
		"localhost.evil.example": true,
	} {
		if got := HostProblem(onLoopback(host)); (got != "") != refused {
			t.Errorf("Host %q: %q, refused %v", host, got, refused)
		}
	}
	// On another address, the Host is the network's business.
	r := httptest.NewRequest(http.MethodGet, "http://x/", nil)
	r.Host = "evil.example"
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 80}))
	if got := HostProblem(r); got != "" {
		t.Errorf("non-loopback listener: %q", got)
	}
	// A control character in Host reaches the message quoted.
	if got := HostProblem(onLoopback("evil\x1b[2J")); !strings.Contains(got, `"evil\x1b[2J"`) {
		t.Errorf("Host quoted: %q", got)
	}
}

func TestOriginProblem(t *testing.T) {
	for origin, refused := range map[string]bool{
		"":                                   false,
		"http://localhost:8080":              false,
		"http://localhost.:3000":             false,
		"https://app.localhost":              false,
		"http://[::1]:9":                     false,
		"http://127.0.0.1:8080":              false,
		"http://server.example:8080":         false, // the server itself (Host)
		"http://evil.example":                true,
		"https://127.0.0.1.evil.example.com": true,
		"null":                               true,
		"file:///tmp/x.html":                 true,
	} {
		r := onLoopback("server.example:8080")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if got := OriginProblem(r); (got != "") != refused {
			t.Errorf("Origin %q: %q, refused %v", origin, got, refused)
		}
	}
}

func TestBearerAndSecrets(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":     "abc",
		"bearer abc":     "abc",
		"BEARER  abc  ":  "abc",
		"  Bearer abc":   "abc",
		"Basic abc":      "",
		"Bearer":         "",
		"Bearer    ":     "",
		"Bearerabc":      "",
		"":               "",
		"Token abc, def": "",
	} {
		if got, ok := BearerToken(header); got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
	s := NewSecrets("one", " two ", "")
	if s.Empty() || !s.Match("one") || !s.Match("two") || s.Match("three") || s.Match("") || s.Match(" two ") {
		t.Error("Secrets: one and two (trimmed) only")
	}
	if !s.MatchBearer("bearer two") || s.MatchBearer("Basic two") {
		t.Error("MatchBearer")
	}
	if !NewSecrets("", "").Empty() {
		t.Error("no secrets given: Empty")
	}
	// A secret of white space only matches no client: fail closed.
	blank := NewSecrets("   ")
	if blank.Empty() || blank.MatchBearer("Bearer    ") || blank.Match("") {
		t.Error("a blank secret must refuse every client, not mean none")
	}
}

func TestCredential(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	if Credential(r) != "" {
		t.Error("no credential")
	}
	r.SetBasicAuth("operator", "pw")
	if Credential(r) != "pw" {
		t.Error("Basic password")
	}
	r.Header.Set("Authorization", "bearer tok ")
	if Credential(r) != "tok" {
		t.Error("Bearer token")
	}
}
