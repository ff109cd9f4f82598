package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/testkit"
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

// TestNoticeErasesTheSpinner: a warning written while a turn's spinner
// runs starts on a clean line (the spinner's line erased), not after the
// spinner's frame.
func TestNoticeErasesTheSpinner(t *testing.T) {
	var out testkit.SyncBuffer
	sp := &spinner{w: &out}
	sp.start("thinking…")
	defer sp.halt()
	c := &Chat{cfg: Config{Err: &out}}
	c.spin.Store(sp)
	for !strings.Contains(out.String(), "thinking…") {
		time.Sleep(5 * time.Millisecond) // the spinner draws at once; bounded by the test's timeout
	}
	c.notice(host.Notice{Warning: true, Text: "MCP server x: gone"})
	s := out.String()
	i := strings.Index(s, "agentapp: warning: MCP server x: gone")
	if i < 0 || !strings.HasSuffix(s[:i], "\r\x1b[K") {
		t.Errorf("the warning does not start on an erased line: %q", s)
	}
}
