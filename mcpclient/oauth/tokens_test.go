package oauth

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// TestTokenStore: a login is kept per server URL (spellings of one URL
// share it, other URLs do not), a damaged file is reported without its
// contents, and Delete says whether there was a login.
func TestTokenStore(t *testing.T) {
	s := NewTokenStore(t.TempDir())
	l := &storedLogin{Server: "https://MCP.example.com/mcp/", ClientID: "c", TokenURL: "https://as.example/token",
		Token: &oauth2.Token{AccessToken: "secret-at", RefreshToken: "secret-rt"}}
	if err := s.save(l); err != nil {
		t.Fatal(err)
	}
	got, err := s.load("https://mcp.example.com/mcp")
	if err != nil || got == nil || got.Token.RefreshToken != "secret-rt" {
		t.Fatalf("load by another spelling: %+v, %v", got, err)
	}
	if other, _ := s.load("https://mcp.example.com/other"); other != nil {
		t.Error("another URL shares the login")
	}
	if err := os.WriteFile(s.Path(l.Server), []byte(`{"server":"x","token":"secret-at`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = s.load(l.Server)
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged file: %v", err)
	}
	if had, err := s.Delete(l.Server); !had || err != nil {
		t.Errorf("Delete = %v, %v", had, err)
	}
	if had, err := s.Delete(l.Server); had || err != nil {
		t.Errorf("second Delete = %v, %v", had, err)
	}
}

// TestRedactTokenError: a failed refresh keeps the OAuth error code (the
// SDK logs in again on invalid_grant) and loses the response body, which
// may echo credentials.
func TestRedactTokenError(t *testing.T) {
	body := []byte(`{"error":"invalid_grant","refresh_token":"secret-rt"}`)
	err := redactTokenError(&oauth2.RetrieveError{Response: &http.Response{StatusCode: 400}, Body: body, ErrorCode: "invalid_grant"})
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" || strings.Contains(err.Error(), "secret") {
		t.Errorf("invalid_grant: %v", err)
	}
	err = redactTokenError(&oauth2.RetrieveError{Response: &http.Response{StatusCode: 502, Status: "502 Bad Gateway"}, Body: []byte("secret-rt")})
	if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "HTTP 502") {
		t.Errorf("no error code: %v", err)
	}
}
