package mcpserver_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

// TestHTTPPerAddressSparesLoopback: by default the per-address bound does
// not apply to loopback clients, which all share one address; the total
// bound still does.
func TestHTTPPerAddressSparesLoopback(t *testing.T) {
	f := startLimits(t, "secret", &mcpserver.RunOptions{MaxConnectionsPerAddress: 3, MaxConnections: 6, ReadHeaderTimeout: connBound, IdleTimeout: connBound})
	for range 5 {
		f.dial(t) // idle: sends nothing
	}
	sixth := f.dial(t)
	sixth.write(f.post("", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if res, body := sixth.response(); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a sixth connection from loopback with a per-address bound of 3: %d %q; want 401 (served, no token)", res.StatusCode, body)
	}
	sixth.closedByServer("the refused sixth") // 401 closes it: 5 open
	time.Sleep(100 * time.Millisecond)        // the slot is freed just after the close
	f.dial(t)                                 // 6 open, idle
	seventh := f.dial(t)
	seventh.write(f.post("", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if res, body := seventh.response(); res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a seventh connection over the total of 6: %d %q; want 503", res.StatusCode, body)
	}
}
