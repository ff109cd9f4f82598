package supervise

import "time"

// How much of what a stdio server writes outside the protocol reaches the
// user. A server can write millions of lines a second; each line the
// bridge reports is a line on the user's terminal, so both reports are
// bounded per window of time, and what goes past the bound is counted and
// summarised instead.
const (
	// skipLogLines non-JSON stdout lines are logged one by one per
	// skipLogWindow; the rest are counted into one summary per window.
	skipLogLines  = 5
	skipLogWindow = 10 * time.Second
	// echoLines lines, and echoBytes bytes, of a server's stderr are
	// echoed (WithStderrEcho) per echoWindow.
	echoLines  = 50
	echoBytes  = 16 << 10
	echoWindow = time.Second
)

// lineGate decides which lines of a flood are shown: at most maxLines
// lines and maxBytes bytes per window, the window starting with the first
// line after the previous one ended. It counts the lines it holds back so
// that the caller can say how many there were: when a new window opens
// after lines were held back, and at the end (flush). A lineGate is used
// by one goroutine.
type lineGate struct {
	maxLines, maxBytes int
	window             time.Duration
	now                func() time.Time

	start        time.Time
	lines, bytes int   // shown in the current window
	held         int64 // held back since the last summary
	heldBytes    int64
}

func newLineGate(maxLines, maxBytes int, window time.Duration) *lineGate {
	return &lineGate{maxLines: maxLines, maxBytes: maxBytes, window: window, now: time.Now}
}

// admit reports whether a line of n bytes is shown. held is the number of
// lines (and their bytes) held back before it and not yet summarised,
// which the caller reports first; it is non-zero only for the first line
// of a window.
func (g *lineGate) admit(n int) (show bool, held, heldBytes int64) {
	now := g.now()
	if g.start.IsZero() || now.Sub(g.start) >= g.window {
		held, heldBytes = g.flush()
		g.start, g.lines, g.bytes = now, 0, 0
	}
	if g.lines >= g.maxLines || (g.maxBytes > 0 && g.bytes+n > g.maxBytes) {
		g.held++
		g.heldBytes += int64(n)
		return false, held, heldBytes
	}
	g.lines++
	g.bytes += n
	return true, held, heldBytes
}

// flush returns the lines held back since the last summary and forgets
// them.
func (g *lineGate) flush() (held, heldBytes int64) {
	held, heldBytes = g.held, g.heldBytes
	g.held, g.heldBytes = 0, 0
	return held, heldBytes
}
