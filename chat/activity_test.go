package chat

import (
	"strings"
	"testing"
	"time"
)

// TestActivityCancelledOnATerminal: on a terminal, whose echo of Ctrl-C
// ("^C") sits where the cursor is, the cancelled call's ✗ line clears that
// echo, says ^C on its own line and starts a line of its own; elsewhere it
// is the plain line.
func TestActivityCancelledOnATerminal(t *testing.T) {
	var tty, plain strings.Builder
	(&activity{w: &tty, tty: true}).cancelled("slowTool", 3*time.Second)
	(&activity{w: &plain}).cancelled("slowTool", 3*time.Second)
	if got, want := tty.String(), "\r\x1b[K^C\n✗ slowTool cancelled after 3s\n"; got != want {
		t.Errorf("on a terminal: %q, want %q", got, want)
	}
	if got := plain.String(); strings.Contains(got, "^C") || !strings.HasPrefix(got, "✗ slowTool cancelled after") {
		t.Errorf("not on a terminal: %q", got)
	}
}
