//go:build unix

package chat

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/creack/pty"
)

// vt plays terminal output onto a grid of cells the way a terminal does
// for what the editor writes: a wide character takes two cells, a
// combining mark joins the cell before it, rows wrap at cols. It reports
// the cursor, so a test can check the column the user sees the cursor in.
type vt struct {
	cols     int
	cells    [][]string
	row, col int
}

func (v *vt) put(s string, w int) {
	if v.col+w > v.cols {
		v.row, v.col = v.row+1, 0
	}
	for len(v.cells) <= v.row {
		v.cells = append(v.cells, nil)
	}
	line := v.cells[v.row]
	for len(line) < v.col+w {
		line = append(line, " ")
	}
	line[v.col] = s
	for k := 1; k < w; k++ {
		line[v.col+k] = ""
	}
	v.cells[v.row] = line
	v.col += w
}

func (v *vt) play(out string) {
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\r':
			v.col = 0
		case r == '\n':
			v.row++
		case r == '\b':
			v.col = max(v.col-1, 0)
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';' || rs[j] == '?') {
				j++
			}
			if j == len(rs) {
				return
			}
			n, err := strconv.Atoi(strings.TrimPrefix(string(rs[i+2:j]), "?"))
			if err != nil {
				n = 0
			}
			for len(v.cells) <= v.row {
				v.cells = append(v.cells, nil)
			}
			switch rs[j] {
			case 'A':
				v.row = max(v.row-max(n, 1), 0)
			case 'B':
				v.row += max(n, 1)
			case 'C':
				v.col = min(v.col+max(n, 1), v.cols-1)
			case 'D':
				v.col = max(v.col-max(n, 1), 0)
			case 'K':
				if n == 0 && v.col < len(v.cells[v.row]) {
					v.cells[v.row] = v.cells[v.row][:v.col]
				}
			case 'J':
				if n == 0 {
					if v.col < len(v.cells[v.row]) {
						v.cells[v.row] = v.cells[v.row][:v.col]
					}
					v.cells = v.cells[:v.row+1]
				}
			case 'H':
				v.row, v.col = 0, 0
			}
			i = j
		case r < ' ' || r == 0x7f:
		default:
			w := clusterWidth(string(r))
			if w == 0 { // joins the character before
				if v.col > 0 && v.row < len(v.cells) && v.col-1 < len(v.cells[v.row]) {
					c := v.col - 1
					for c > 0 && v.cells[v.row][c] == "" {
						c--
					}
					v.cells[v.row][c] += string(r)
				}
				continue
			}
			v.put(string(r), w)
		}
	}
}

func (v *vt) line(row int) string {
	if row >= len(v.cells) {
		return ""
	}
	return strings.TrimRight(strings.Join(v.cells[row], ""), " ")
}

// cursorAt waits until the screen's cursor stands at column col (counted
// from 0) on a row that reads line, and fails otherwise. The deadline
// only keeps a broken editor from hanging the test.
func (term *terminal) cursorAt(line string, col int) {
	term.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v := &vt{cols: 160}
		v.play(term.output())
		if v.col == col && v.line(v.row) == line {
			return
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("cursor at row %d column %d on %q; want column %d on %q", v.row, v.col, v.line(v.row), col, line)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPTYEditWideCharacters: a Chinese line and a line of emoji and
// combining marks are typed, edited and sent on a real terminal; after
// each key the cursor stands in the column where the text is (two columns
// for a CJK character or an emoji, none for a combining mark), and the
// message sent is the edited text.
func TestPTYEditWideCharacters(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	q := "出差住宿标准是多少？"
	term.send(q)
	term.cursorAt("> "+q, 22)
	term.send("\x1b[D\x1b[D\x1b[D")
	term.cursorAt("> "+q, 16)
	term.send("的")
	term.cursorAt("> 出差住宿标准是的多少？", 18)
	term.send("\x01") // Ctrl-A
	term.cursorAt("> 出差住宿标准是的多少？", 2)
	term.send("\x05") // Ctrl-E
	term.cursorAt("> 出差住宿标准是的多少？", 24)
	term.send("\x7f") // Backspace
	term.cursorAt("> 出差住宿标准是的多少", 22)
	term.send("\r")
	term.expect("echo: 出差住宿标准是的多少 (1 messages)")
	term.expect("> ")

	// Mixed: ASCII, an emoji (two columns) and e + a combining acute accent
	// (one column, one character for the cursor).
	term.send("ab😀e\u0301z")
	term.cursorAt("> ab😀e\u0301z", 8)
	term.send("\x1b[D")
	term.cursorAt("> ab😀e\u0301z", 7)
	term.send("\x1b[D") // over é as one character
	term.cursorAt("> ab😀e\u0301z", 6)
	term.send("\x1b[D\x7f") // before 😀, delete b
	term.cursorAt("> a😀e\u0301z", 3)
	term.send("\x1b[3~") // Delete removes 😀
	term.cursorAt("> ae\u0301z", 3)
	term.send("\r")
	term.expect("echo: ae\u0301z (3 messages)")
	term.expect("> ")

	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// TestPTYLongPasteRefused: a bracketed paste of 8,001 characters is refused
// at once and drawn once (the bound is on a pathological redraw, not a
// benchmark: drawing it character by character takes many seconds), and an
// 8,001-character line that arrives without paste brackets is refused when
// sent.
func TestPTYLongPasteRefused(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	start := time.Now()
	term.send(pasteStart + strings.Repeat("字", host.MaxMessageRunes+1) + pasteEnd)
	term.expect("paste refused: it would make the message 8001 characters long and the limit is 8000")
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v, want under a second", d)
	}
	term.expect("> ")
	start = time.Now()
	term.send(strings.Repeat("a", host.MaxMessageRunes+1) + "\r")
	term.expect("message refused: it is 8001 characters long and the limit is 8000")
	if d := time.Since(start); d > time.Second {
		t.Errorf("the refusal took %v, want under a second", d)
	}
	term.expect("> ")
	term.send("after\r")
	term.expect("echo: after (1 messages)")
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// TestPTYConfirmAlways: "a" approves the tool for the rest of the session,
// so the next call is not asked about; the answer is not kept in the line
// history, and the question leaves one line on the screen.
func TestPTYConfirmAlways(t *testing.T) {
	dir := t.TempDir()
	term := startTerminal(t, dir, ptyConfirmEnv+"=30s")
	term.expect("Type a message.")
	term.expect("> ")
	term.send("please call:refund now\r")
	term.expect("[y once/a session/N/?] ")
	term.send("a\r")
	term.expect("tool said: refunded")
	term.expect("> ")
	term.send("again call:refund please\r")
	term.expect("tool said: refunded")
	term.expect("> ")
	screen := strings.Join(render(term.output()), "\n")
	if n := strings.Count(screen, "[y once/a session/N/?]"); n != 1 {
		t.Errorf("the question is on the screen %d times, want once:\n%s", n, screen)
	}
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	hist := readFile(t, filepath.Join(dir, "history"))
	if !strings.Contains(hist, "please call:refund now\n") || strings.Contains(hist, "\na\n") || strings.HasPrefix(hist, "a\n") {
		t.Errorf("history:\n%s", hist)
	}
}

// TestPTYWrappedQuestionDrawnOnce: on a terminal too narrow for the
// confirmation question, the question wraps over several rows; typing and
// erasing the answer redraws it in place, so it is on the screen once.
func TestPTYWrappedQuestionDrawnOnce(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyConfirmEnv+"=30s")
	term.expect("Type a message.")
	term.expect("> ")
	if err := pty.Setsize(term.ptmx, &pty.Winsize{Rows: 40, Cols: 24}); err != nil {
		t.Fatal(err)
	}
	term.send("call:refund\r")
	term.expect("[y once/a session/N/?] ")
	term.send("n")
	term.send("\x7f")
	term.send("y")
	term.send("\r")
	term.expect("tool said: refunded")
	term.expect("> ")
	v := &vt{cols: 24}
	v.play(term.output())
	var screen []string
	for r := range v.cells {
		screen = append(screen, v.line(r))
	}
	joined := strings.Join(screen, "\n")
	if n := strings.Count(joined, "Allow tool"); n != 1 {
		t.Errorf("the question's first row is on the screen %d times, want once:\n%s", n, joined)
	}
	if n := strings.Count(joined, "[y once/a session/N/?]"); n != 1 {
		t.Errorf("the question's last row is on the screen %d times, want once:\n%s", n, joined)
	}
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}
