package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
)

func TestResolveHTTPAddrLocalhostNamesAndTokens(t *testing.T) {
	for _, tc := range []struct {
		addr, token, want, wantErr string
	}{
		// A name under .localhost is bound as 127.0.0.1, never resolved.
		{addr: "app.localhost:9", want: "127.0.0.1:9"},
		{addr: "App.LocalHost.:9", want: "127.0.0.1:9"},
		{addr: "a.b.localhost:0", token: "t", want: "127.0.0.1:0"},
		{addr: "localhost.example.com:9", wantErr: "without a bearer token"},
		{addr: "notlocalhost:9", wantErr: "without a bearer token"},
		// A token no client could send is refused, wherever it is used.
		{addr: "0.0.0.0:8080", token: "   ", wantErr: "only white space"},
		{addr: "127.0.0.1:8080", token: "\t\n", wantErr: "only white space"},
		{addr: "0.0.0.0:8080", token: "to\x01ken", wantErr: "control character"},
		{addr: "0.0.0.0:8080", token: " token\n", want: "0.0.0.0:8080"},
	} {
		got, err := mcpserver.ResolveHTTPAddr(tc.addr, tc.token)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("mcpserver.ResolveHTTPAddr(%q, %q) = %q, %v; want an error containing %q", tc.addr, tc.token, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("mcpserver.ResolveHTTPAddr(%q, %q) = %q, %v; want %q", tc.addr, tc.token, got, err, tc.want)
		}
	}
}

// TestHTTPTokenWhiteSpace checks that white space around the server's
// token is not part of it, as it is not of the client's, and that a blank
// token refuses everyone rather than no one.
func TestHTTPTokenWhiteSpace(t *testing.T) {
	post := func(url, auth string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	srv := mcpserver.New(&mcpserver.Options{Version: "test"})
	padded := httptest.NewServer(mcpserver.NewHTTPHandler(srv, &mcpserver.HTTPOptions{Token: " tok-pad\n"}))
	defer padded.Close()
	if s := post(padded.URL+mcpserver.HTTPPath, "Bearer tok-pad"); s != http.StatusOK {
		t.Errorf("token with surrounding white space: status %d with the bare token, want 200", s)
	}
	blank := httptest.NewServer(mcpserver.NewHTTPHandler(srv, &mcpserver.HTTPOptions{Token: "  "}))
	defer blank.Close()
	for _, auth := range []string{"", "Bearer", "Bearer   "} {
		if s := post(blank.URL+mcpserver.HTTPPath, auth); s != http.StatusUnauthorized {
			t.Errorf("blank server token, Authorization %q: status %d, want 401", auth, s)
		}
	}
}
