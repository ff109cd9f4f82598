//go:build unix

package oauth

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenBrowserUsesBROWSER: the URL goes to $BROWSER, in place of a %s
// or appended, as one argument whatever it contains.
func TestOpenBrowserUsesBROWSER(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "args")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > "+out+"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	u := "http://127.0.0.1:1/authorize?a=1&b=two words"
	for _, c := range []struct{ env, want string }{
		{script, u + "|"},
		{script + " --new-tab %s --x", "--new-tab|" + u + "|--x|"},
	} {
		t.Setenv("BROWSER", c.env)
		if err := openBrowser(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(out)
		if string(got) != c.want {
			t.Errorf("BROWSER=%q: args %q, want %q", c.env, got, c.want)
		}
	}
	t.Setenv("BROWSER", filepath.Join(dir, "missing"))
	if err := openBrowser(context.Background(), u); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("a missing browser: %v", err)
	}
}

// TestLoopbackRefusal: an authorization server's refusal (error=…) ends
// the wait with its reason; a redirect without a code is refused and the
// wait goes on.
func TestLoopbackRefusal(t *testing.T) {
	cb, err := newLoopback(0)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.close()
	go func() {
		time.Sleep(50 * time.Millisecond)
		if resp, err := http.Get(cb.redirectURL() + "?state=s1"); err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("a redirect without a code answered %d", resp.StatusCode)
			}
		}
		if resp, err := http.Get(cb.redirectURL() + "?state=s1&error=access_denied&error_description=user+said+no"); err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = cb.wait(ctx, "s1")
	if err == nil || !strings.Contains(err.Error(), "refused the login (access_denied: user said no)") {
		t.Errorf("wait = %v", err)
	}
}
