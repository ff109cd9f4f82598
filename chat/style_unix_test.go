//go:build unix

package chat

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestStyleOnlyOnATerminal: colour is on for a terminal, off with NoColor
// (NO_COLOR) and off for anything that is not a terminal; the activity
// lines carry escape codes only when it is on.
func TestStyleOnlyOnATerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	c := &Chat{}
	if !c.style(tty).on {
		t.Error("no colour on a terminal")
	}
	c.cfg.NoColor = true
	if c.style(tty).on {
		t.Error("colour with NO_COLOR")
	}
	c.cfg.NoColor = false
	var buf bytes.Buffer
	if c.style(&buf).on {
		t.Error("colour on a buffer")
	}
	plain := &activity{w: &buf, st: c.style(&buf)}
	plain.ended("getOrderStatus", 12*time.Millisecond, nil, "", false)
	if strings.Contains(buf.String(), "\x1b[") || buf.String() != "✓ getOrderStatus 12ms\n" {
		t.Errorf("plain activity line = %q", buf.String())
	}
	buf.Reset()
	coloured := &activity{w: &buf, st: style{on: true}}
	coloured.ended("getOrderStatus", 12*time.Millisecond, nil, "", false)
	if !strings.Contains(buf.String(), "\x1b[32m✓\x1b[0m") {
		t.Errorf("coloured activity line = %q", buf.String())
	}
}
