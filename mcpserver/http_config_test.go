package mcpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
)

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
	padded := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: " tok-pad\n"}))
	defer padded.Close()
	if s := post(padded.URL+mcpserver.HTTPPath, "Bearer tok-pad"); s != http.StatusOK {
		t.Errorf("token with surrounding white space: status %d with the bare token, want 200", s)
	}
	blank := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: "  "}))
	defer blank.Close()
	for _, auth := range []string{"", "Bearer", "Bearer   "} {
		if s := post(blank.URL+mcpserver.HTTPPath, auth); s != http.StatusUnauthorized {
			t.Errorf("blank server token, Authorization %q: status %d, want 401", auth, s)
		}
	}
}
