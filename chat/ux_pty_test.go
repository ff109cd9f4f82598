//go:build unix

package chat

import (
	"strings"
	"testing"
)

// TestPTYCancelledToolLine: Ctrl-C while a tool runs ends the tool's "→"
// line with a ✗ line saying it was cancelled, before the turn's own note.
func TestPTYCancelledToolLine(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	term.send("please call:slowTool now\r")
	term.expect("→ slowTool (local)")
	term.expect("SLOW-STARTED")
	term.send("\x03")
	term.expect("^C turn cancelled")
	term.expect("> ")
	screen := strings.Join(render(term.output()), "\n")
	i, j := strings.Index(screen, "✗ slowTool cancelled after "), strings.Index(screen, "^C turn cancelled")
	if i < 0 || j < i {
		t.Errorf("no \"✗ slowTool cancelled after …\" line before the turn's note:\n%s", screen)
	}
	if strings.Contains(screen, "slowTool failed") {
		t.Errorf("the cancelled call is also reported as failed:\n%s", screen)
	}
	// The same for /call.
	term.send("/call slowTool\r")
	term.expect("SLOW-STARTED")
	term.send("\x03")
	term.expect("slowTool cancelled after ")
	term.expect("> ")
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}
