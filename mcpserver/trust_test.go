package mcpserver

import (
	"net/http"
	"testing"
)

// TestTokenCallerReadsTheHeaderAsTheCheckDoes: the token check takes the
// scheme in any case, so the caller of a task is named by its token in
// every case too; before, "bearer" let a client in without a name.
func TestTokenCallerReadsTheHeaderAsTheCheckDoes(t *testing.T) {
	caller := func(v string) string { return tokenCaller(http.Header{"Authorization": {v}}) }
	want := caller("Bearer secret")
	if want == "" {
		t.Fatal("no caller for a Bearer token")
	}
	for _, v := range []string{"bearer secret", "BEARER secret ", " Bearer  secret"} {
		if got := caller(v); got != want {
			t.Errorf("%q: caller %q, want %q", v, got, want)
		}
	}
	for _, v := range []string{"", "Bearer ", "Basic c2VjcmV0", "Bearersecret"} {
		if got := caller(v); got != "" {
			t.Errorf("%q: caller %q, want none", v, got)
		}
	}
}
