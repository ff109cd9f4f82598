package supervise

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// TestLineGate: a flood is shown maxLines lines (and maxBytes bytes) per
// window; what is held back is reported when the next window opens, and
// by flush at the end.
func TestLineGate(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	g := newLineGate(3, 100, time.Second)
	g.now = func() time.Time { return now }
	var shown []int
	var reports []int64
	for i := range 10 {
		show, held, _ := g.admit(10)
		if show {
			shown = append(shown, i)
		}
		if held > 0 {
			reports = append(reports, held)
		}
	}
	now = now.Add(time.Second)
	show, held, heldBytes := g.admit(95) // a new window: the report of the last one
	if !show || held != 7 || heldBytes != 70 {
		t.Errorf("first line of the next window: show %v, held %d (%d bytes), want true, 7 (70)", show, held, heldBytes)
	}
	if show, _, _ := g.admit(10); show {
		t.Error("a line over the byte budget was shown")
	}
	if held, _ := g.flush(); held != 1 {
		t.Errorf("flush = %d, want 1", held)
	}
	if fmt.Sprint(shown) != "[0 1 2]" || len(reports) != 0 {
		t.Errorf("shown %v, reports %v within the first window", shown, reports)
	}
}

// TestFrameFilterSummarisesFlood: a flood of non-JSON stdout lines is
// logged as its first 5 lines (skipLogLines) and one summary.
func TestFrameFilterSummarisesFlood(t *testing.T) {
	var in strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&in, "\x1b[31mnoise %d\n", i)
	}
	in.WriteString(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	logger, logs := testkit.NewLogger()
	f := NewFrameFilter("srv", io.NopCloser(strings.NewReader(in.String())), 0, logger)
	got, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if string(got) != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" {
		t.Errorf("frames %q", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 6 || !strings.Contains(lines[5], "… and 99,995 more non-JSON lines on stdout skipped without being logged") {
		t.Errorf("%d log lines, want 5 and a summary; the first and last:\n%s\n%s", len(lines), lines[0], lines[len(lines)-1])
	}
	if strings.Contains(logs.String(), "\x1b") {
		t.Error("the log holds a raw escape")
	}
}

// TestStderrEchoBoundedAndEscaped: a server's stderr is echoed escaped,
// at most 50 lines (echoLines) per window, then a line saying how many
// were not shown; the ring keeps the escaped lines too.
func TestStderrEchoBoundedAndEscaped(t *testing.T) {
	var in strings.Builder
	for i := range 10_000 {
		fmt.Fprintf(&in, "\x1b[2Jline %d\n", i)
	}
	var ring StderrRing
	var echo strings.Builder
	pumpStderr("srv\x1b", strings.NewReader(in.String()), &ring, &echo, slog.New(slog.DiscardHandler))
	lines := strings.Split(strings.TrimSpace(echo.String()), "\n")
	if len(lines) != 51 {
		t.Fatalf("echoed %d lines, want 50 and a summary", len(lines))
	}
	if lines[0] != `[srv\x1b] \x1b[2Jline 0` {
		t.Errorf("first line %q", lines[0])
	}
	if want := `[srv\x1b] … 9,950 more stderr lines (`; !strings.HasPrefix(lines[50], want) {
		t.Errorf("summary %q, want it to start %q", lines[50], want)
	}
	if tail := ring.Tail(1); len(tail) != 1 || tail[0] != `\x1b[2Jline 9999` {
		t.Errorf("ring tail %q", tail)
	}
}
