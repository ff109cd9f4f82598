package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestLegacyIssuer: without protected-resource metadata, root metadata
// whose issuer is a path on the same origin is taken as the origin's (the
// 2025-03-26 rule); an issuer on another origin, or any metadata once
// protected-resource metadata was found, is passed on untouched for the
// SDK to check.
func TestLegacyIssuer(t *testing.T) {
	issuer := ""
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			w.Write([]byte(`{"resource":"x","authorization_servers":["y"]}`))
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "token_endpoint": issuer + "/token"})
		default:
			http.NotFound(w, r)
		}
	}))
	defer ts.Close()
	get := func(rt http.RoundTripper, path string) map[string]string {
		t.Helper()
		resp, err := (&http.Client{Transport: rt}).Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return m
	}
	rt := &legacyIssuer{base: http.DefaultTransport}
	issuer = ts.URL + "/oauth"
	if m := get(rt, "/.well-known/oauth-authorization-server"); m["issuer"] != ts.URL || m["token_endpoint"] != ts.URL+"/oauth/token" {
		t.Errorf("same-origin issuer under a path: got %v, want issuer %s and the endpoints untouched", m, ts.URL)
	}
	issuer = "https://evil.example/oauth"
	if m := get(rt, "/.well-known/oauth-authorization-server"); m["issuer"] != issuer {
		t.Errorf("another origin's issuer was rewritten: %v", m)
	}
	issuer = ts.URL + "/oauth"
	get(rt, "/.well-known/oauth-protected-resource/mcp")
	if m := get(rt, "/.well-known/oauth-authorization-server"); m["issuer"] != issuer {
		t.Errorf("rewritten although protected-resource metadata exists: %v", m)
	}
}
