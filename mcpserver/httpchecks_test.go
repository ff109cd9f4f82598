package mcpserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

// TestHTTPHeaderPrechecks (issue 43, item 10): a Content-Length of 10 GB
// is answered 413 at once, not after the 30 s body timeout with 400; and
// MCP-Protocol-Version given twice with different values is refused.
func TestHTTPHeaderPrechecks(t *testing.T) {
	f := startLimits(t, "secret", &mcpserver.RunOptions{ReadHeaderTimeout: connBound, IdleTimeout: connBound})
	c := f.dial(t)
	start := time.Now()
	c.write(f.request(http.MethodPost, "secret", "Content-Length: 10737418240") + "\r\n")
	res, body := c.response()
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "over the 4194304-byte limit") {
		t.Errorf("Content-Length 10 GB: %d %q; want 413 naming the limit", res.StatusCode, body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the 413 took %v; want it at once", d)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, hs := range [][]string{
		{"MCP-Protocol-Version: 2025-06-18", "MCP-Protocol-Version: 2025-03-26"},
		{"MCP-Protocol-Version: 2025-06-18, 2025-03-26"},
	} {
		c := f.dial(t)
		c.write(f.post("secret", ping, hs...))
		if res, body := c.response(); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "MCP-Protocol-Version") {
			t.Errorf("%q: %d %q; want 400 naming the header", hs, res.StatusCode, body)
		}
	}
}
