package main

import (
	"strings"
	"testing"
)

// TestListenSandbox: the views' sandbox gets its own listener and origin;
// an origin that is not one, or is the page's, is a usage error, and
// "off" turns views off.
func TestListenSandbox(t *testing.T) {
	ln, origin, err := listenSandbox(&webFlags{sandboxAddr: "127.0.0.1:0"}, "127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://" + ln.Addr().String(); origin != want {
		t.Errorf("origin %q, want %q", origin, want)
	}
	ln.Close()
	ln, origin, err = listenSandbox(&webFlags{sandboxAddr: "127.0.0.1:0", sandboxOrigin: "https://sandbox.example.com/"}, "127.0.0.1:8080")
	if err != nil || origin != "https://sandbox.example.com" {
		t.Fatalf("behind a proxy: %q, %v", origin, err)
	}
	ln.Close()
	if ln, origin, err := listenSandbox(&webFlags{sandboxAddr: "127.0.0.1:0", sandboxOrigin: "off"}, "127.0.0.1:8080"); ln != nil || origin != "" || err != nil {
		t.Errorf("off: %v %q %v", ln, origin, err)
	}
	for _, c := range []struct{ origin, want string }{
		{"http://127.0.0.1:8080", "is the page's origin"},
		{"sandbox.example.com", "not an origin"},
		{"https://sandbox.example.com/views", "not an origin"},
	} {
		_, _, err := listenSandbox(&webFlags{sandboxAddr: "127.0.0.1:0", sandboxOrigin: c.origin}, "127.0.0.1:8080")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--sandbox-origin %s: %v, want %q", c.origin, err, c.want)
		}
	}
}

// TestSandboxWarning: a page reachable from other machines with its
// views' sandbox on loopback gets a warning naming the flags; loopback
// pages and public sandbox origins get none.
func TestSandboxWarning(t *testing.T) {
	for _, c := range []struct {
		http, origin string
		warn         bool
	}{
		{"0.0.0.0:8080", "http://127.0.0.1:39000", true},
		{":8080", "http://localhost:39000", true},
		{"127.0.0.1:8080", "http://127.0.0.1:39000", false},
		{"0.0.0.0:8080", "https://sandbox.example.com", false},
		{"0.0.0.0:8080", "", false},
	} {
		w := sandboxWarning(c.http, c.origin)
		if (w != "") != c.warn || (c.warn && !strings.Contains(w, "--sandbox-origin")) {
			t.Errorf("--http %s, sandbox %q: warning %q", c.http, c.origin, w)
		}
	}
}
