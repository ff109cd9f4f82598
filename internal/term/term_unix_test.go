//go:build unix

package term

import (
	"testing"

	"github.com/creack/pty"
)

func TestIsTerminalOnAPseudoTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !IsTerminal(tty) {
		t.Error("IsTerminal(the terminal end of a pty) = false")
	}
}
