package main

import "testing"

// TestWebAddrLoopbackAsTheServersSee: agentapp web reads a loopback
// --http address with the servers' rule (internal/trust): "localhost." is
// localhost, where it used to be asked for a token; a name under
// .localhost, which a listener resolves through DNS, still needs one.
func TestWebAddrLoopbackAsTheServersSee(t *testing.T) {
	for _, addr := range []string{"localhost.:8080", "LocalHost:8080", "[::1]:8080", "127.0.0.2:8080"} {
		if err := checkWebAddr(addr, "", nil, false); err != nil {
			t.Errorf("%s: %v, want no token needed", addr, err)
		}
	}
	for _, addr := range []string{"app.localhost:8080", ":8080", "0.0.0.0:8080", "example.com:8080"} {
		if err := checkWebAddr(addr, "", nil, false); err == nil {
			t.Errorf("%s: accepted without a token", addr)
		}
	}
	if !isLoopbackAddr("localhost.:9") || !isLoopbackAddr("app.localhost:9") || isLoopbackAddr("example.com:9") {
		t.Error("isLoopbackAddr: the sandbox origin's host as trust reads it")
	}
}
