//go:build linux

package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// TestDownServerNotAskedOnTerminal (issue 44, point 10): on a terminal,
// /call of a tool whose server crashed on every call is asked about while
// the server can still be restarted (four times: the start and three
// restarts), and once it is down the fifth call says so at once, without
// another approval question.
func TestDownServerNotAskedOnTerminal(t *testing.T) {
	data := t.TempDir()
	server := "crashy=" + mcpTestServerBin(t) + " -live -crash-every 1"
	f, out := startPTYChat(t, data, "--model", "offline", "--mcp", server, "--ask", "crashy:echo")
	for i := 1; i <= 4; i++ {
		from := len(out.String())
		io.WriteString(f, `/call echo {"text":"x"}`+"\r")
		waitAfter(t, out, from, "Allow tool echo")
		io.WriteString(f, "y\r")
		waitAfter(t, out, from, "stopped while the call was running")
	}
	from := len(out.String())
	io.WriteString(f, `/call echo {"text":"x"}`+"\r")
	waitAfter(t, out, from, "MCP server crashy is down")
	if last := out.String()[from:]; strings.Contains(last, "Allow tool echo") {
		t.Errorf("the call to the down server was asked about:\n%s", last)
	}
}

// waitAfter waits until out holds substr after its first from bytes.
func waitAfter(t *testing.T, out *testkit.SyncBuffer, from int, substr string) {
	t.Helper()
	if _, err := out.Wait(30*time.Second, func(s string) bool { return strings.Contains(s[from:], substr) }); err != nil {
		t.Fatalf("waiting for %q: %v\n%s", substr, err, out.String()[from:])
	}
}
