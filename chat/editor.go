package chat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/private"
	"github.com/clipperhouse/uax29/v2/graphemes"
	"github.com/mattn/go-runewidth"
	"golang.org/x/term"
)

// The line editor of the REPL on a terminal. It is written here, over raw
// terminal mode, rather than taken from a library: the maintained Go
// editors that this build can use either redraw by moving one column per
// character (wrong for CJK and emoji, and a redraw per pasted character),
// or cannot be driven from another goroutine (the confirmation question
// takes over the prompt of a read in progress, and notes are written above
// the line). It edits grapheme clusters, so a combining mark or an emoji
// sequence moves and deletes as one character, and measures them in
// terminal columns (go-runewidth), so the cursor lands where the text is.

// historyLimit bounds the line history kept in the file and in memory.
const historyLimit = 1000

// maxEditorRunes bounds what the editor holds; past it typed and pasted
// text is refused, so a runaway paste cannot grow memory or redraws
// without bound. Messages over host.MaxMessageRunes are refused when sent.
const maxEditorRunes = 4 * host.MaxMessageRunes

// Bracketed paste: the terminal wraps pasted text in these, so a paste is
// taken in whole and drawn once.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// contPrompt starts each further row of a message of several lines (a
// multi-line paste, or Alt-Enter): as wide as the prompt, so the
// lines stay aligned under the first.
const contPrompt = "  "

// histBreak stands for a line break of a message in the history file,
// which holds one message per line (U+2028 LINE SEPARATOR, which typed
// text hardly ever holds).
const histBreak = "\u2028"

// width measures clusters: East Asian ambiguous characters are one column,
// as most terminals draw them outside CJK locales.
var width = &runewidth.Condition{EastAsianWidth: false}

// termEditor edits lines on a terminal; it implements lineSource and
// editor.
type termEditor struct {
	in   *os.File
	fd   int
	out  io.Writer
	errw io.Writer

	chunks  chan []byte // what the reader goroutine read from the terminal
	readErr error       // set before chunks is closed

	history     []string
	historyFile string
	histWarned  bool

	mu      sync.Mutex // guards everything below and every write while reading
	reading bool
	prompt  string
	line    []string // grapheme clusters
	pos     int      // cursor, in clusters
	row     int      // terminal row of the cursor within the drawing
	saved   *termState
	pending []byte // input not yet handled (an escape sequence cut by a read)
	pasting bool
	paste   []byte

	// Ctrl-R: searching the history backwards for query, found at hit
	// (-1: nothing yet); the line shows the match.
	searching  bool
	query      string
	hit        int
	before     []string // the line before the search, for Ctrl-G
	mainPrompt string

	// complete proposes completions for Tab (nil: Tab does nothing).
	complete completer
}

// newTermEditor edits lines on the terminal in, drawing on out, with the
// history kept in historyFile (none if empty, created 0600).
func newTermEditor(in *os.File, out, errw io.Writer, historyFile string) (*termEditor, error) {
	e := &termEditor{in: in, fd: int(in.Fd()), out: out, errw: errw, prompt: replPrompt, chunks: make(chan []byte, 64)}
	if _, err := getState(e.fd); err != nil {
		return nil, err
	}
	if historyFile != "" {
		if err := e.loadHistory(historyFile); err != nil {
			fmt.Fprintf(errw, "agentapp: warning: no line history this chat: %v\n", err)
		} else {
			e.historyFile = historyFile
		}
	}
	go e.readInput()
	return e, nil
}

// readInput reads the terminal for the editor's whole life. A read of a
// terminal cannot be interrupted, so at Close this goroutine stays blocked
// until the next key or the end of the process; nothing else reads the
// terminal in a chat.
func (e *termEditor) readInput() {
	buf := make([]byte, 4096)
	for {
		n, err := e.in.Read(buf)
		if n > 0 {
			e.chunks <- append([]byte(nil), buf[:n]...)
		}
		if err != nil {
			e.readErr = err
			close(e.chunks)
			return
		}
	}
}

// loadHistory reads the last historyLimit lines of path, creating it 0600,
// and rewrites it when it holds more.
func (e *termEditor) loadHistory(path string) error {
	if err := private.CreateFile(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*maxEditorRunes)
	var lines []string
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, strings.ReplaceAll(l, histBreak, "\n"))
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(lines) > historyLimit {
		lines = lines[len(lines)-historyLimit:]
		kept := make([]string, len(lines))
		for i, l := range lines {
			kept[i] = strings.ReplaceAll(l, "\n", histBreak)
		}
		if err := writePrivate(path, []byte(strings.Join(kept, "\n")+"\n")); err != nil {
			return err
		}
	}
	e.history = lines
	return nil
}

// writePrivate replaces path with data, 0600, through a temporary file.
func writePrivate(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	if err := private.Restrict(tmp); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// remember adds a sent message to the history and its file.
func (e *termEditor) remember(line string) {
	if strings.TrimSpace(line) == "" || (len(e.history) > 0 && e.history[len(e.history)-1] == line) {
		return
	}
	e.history = append(e.history, line)
	if len(e.history) > historyLimit {
		e.history = e.history[len(e.history)-historyLimit:]
	}
	if e.historyFile == "" {
		return
	}
	f, err := os.OpenFile(e.historyFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		_, err = f.WriteString(strings.ReplaceAll(line, "\n", histBreak) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil && !e.histWarned {
		e.histWarned = true
		e.writeAboveLocked([]byte(fmt.Sprintf("agentapp: warning: the line history could not be saved: %v\n", err)))
	}
}

func (e *termEditor) drawsPrompt() bool { return true }

func (e *termEditor) close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.saved != nil {
		io.WriteString(e.out, "\x1b[?2004l")
		err := setState(e.fd, e.saved)
		e.saved = nil
		return err
	}
	return nil
}

// readLine reads one line. prompt "" means the REPL's prompt; a line read
// under another prompt (a confirmation question) is not kept in the
// history.
func (e *termEditor) readLine(prompt string) (string, error) {
	e.mu.Lock()
	if prompt == "" {
		prompt = replPrompt
	}
	if err := e.startLocked(prompt); err != nil {
		e.mu.Unlock()
		return "", err
	}
	histPos := len(e.history)
	draft := ""
	e.mu.Unlock()
	for {
		chunk, ok := <-e.chunks
		e.mu.Lock()
		if !ok {
			e.finishLocked()
			err := e.readErr
			e.mu.Unlock()
			if err == nil || errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				err = io.EOF
			}
			return "", err
		}
		res, done := e.handleLocked(chunk, &histPos, &draft)
		if done {
			line := e.text()
			e.finishLocked()
			if res == nil && e.prompt == replPrompt {
				e.remember(line)
			}
			e.mu.Unlock()
			return line, res
		}
		e.redrawLocked()
		e.mu.Unlock()
	}
}

// startLocked enters raw mode with bracketed paste and draws the prompt.
func (e *termEditor) startLocked(prompt string) error {
	st, err := makeRaw(e.fd)
	if err != nil {
		return err
	}
	e.saved = st
	e.reading = true
	e.prompt = prompt
	e.line, e.pos, e.row = nil, 0, 0
	io.WriteString(e.out, "\x1b[?2004h")
	e.redrawLocked()
	return nil
}

// suspendLocked is Ctrl-Z: the terminal is given back as it was (cooked
// mode, no bracketed paste) while the job is stopped, and taken again, the
// line drawn anew, when the shell continues it.
func (e *termEditor) suspendLocked() {
	if e.saved == nil {
		return
	}
	e.moveToEndLocked()
	io.WriteString(e.out, "\r\n\x1b[?2004l")
	_ = setState(e.fd, e.saved)
	e.saved = nil
	err := stopSelf()
	st, rerr := makeRaw(e.fd)
	if rerr == nil {
		e.saved = st
	}
	io.WriteString(e.out, "\x1b[?2004h")
	e.row = 0
	if err != nil {
		e.writeAboveLocked([]byte(fmt.Sprintf("agentapp: the chat could not be suspended: %v\n", err)))
	}
}

// finishLocked leaves the cursor after the line on a new row and restores
// the terminal.
func (e *termEditor) finishLocked() {
	e.moveToEndLocked()
	io.WriteString(e.out, "\r\n\x1b[?2004l")
	if e.saved != nil {
		_ = setState(e.fd, e.saved)
		e.saved = nil
	}
	e.reading = false
	e.row = 0
}

// text is the line being edited.
func (e *termEditor) text() string { return strings.Join(e.line, "") }

// handleLocked applies the keys in chunk. done is set when the read ends:
// Enter (err nil), Ctrl-C (errPromptInterrupt) or Ctrl-D on an empty line
// (io.EOF).
func (e *termEditor) handleLocked(chunk []byte, histPos *int, draft *string) (err error, done bool) {
	b := append(e.pending, chunk...)
	e.pending = nil
	var typed []byte // printable text, inserted at once
	flush := func() {
		if len(typed) > 0 {
			e.insertLocked(string(typed))
			typed = typed[:0]
		}
	}
	for len(b) > 0 {
		if e.pasting {
			if i := bytes.Index(b, []byte(pasteEnd)); i >= 0 {
				e.paste = append(e.paste, b[:i]...)
				b = b[i+len(pasteEnd):]
				e.pasting = false
				e.pasteLocked()
				continue
			}
			// Keep a possible start of the end marker for the next read.
			keep := min(len(b), len(pasteEnd)-1)
			e.paste = append(e.paste, b[:len(b)-keep]...)
			e.pending = append(e.pending, b[len(b)-keep:]...)
			if len(e.paste) > 4*maxEditorRunes {
				e.paste = e.paste[:4*maxEditorRunes+1] // refused at the end in any case
			}
			return nil, false
		}
		c := b[0]
		if e.searching {
			if n, ok := e.searchKeyLocked(b); ok {
				b = b[n:]
				continue
			}
			// Any other key takes the match and is handled as usual.
			e.endSearchLocked(true)
		}
		switch {
		case c == 0x12: // Ctrl-R
			flush()
			e.startSearchLocked()
		case c == 0x1b:
			flush()
			n, key := escapeKey(b)
			if n == 0 { // incomplete: wait for the rest
				e.pending = append(e.pending, b...)
				return nil, false
			}
			b = b[n:]
			switch key {
			case "paste":
				e.pasting, e.paste = true, e.paste[:0]
			case "left":
				e.pos = max(e.pos-1, 0)
			case "right":
				e.pos = min(e.pos+1, len(e.line))
			case "home":
				e.pos = 0
			case "end":
				e.pos = len(e.line)
			case "delete":
				e.deleteLocked(e.pos, e.pos+1)
			case "up":
				e.historyLocked(-1, histPos, draft)
			case "down":
				e.historyLocked(1, histPos, draft)
			case "wordleft":
				e.pos = e.wordStart()
			case "wordright":
				e.pos = e.wordEnd()
			case "newline": // Alt-Enter
				e.insertLocked("\n")
			}
			continue
		case c == '\r' || c == '\n':
			// Enter. LF is Enter too, not a line break (Ctrl-J): keys typed
			// while a turn runs reach the terminal out of raw mode, where
			// it turns Enter's CR into LF. Alt-Enter is the line break.
			flush()
			e.pending = nil
			return nil, true
		case c == 0x03: // Ctrl-C
			flush()
			e.pending = nil
			io.WriteString(e.out, "^C")
			return errPromptInterrupt, true
		case c == 0x04: // Ctrl-D
			flush()
			if len(e.line) == 0 {
				return io.EOF, true
			}
			e.deleteLocked(e.pos, e.pos+1)
		case c == 0x7f || c == 0x08: // Backspace
			flush()
			e.deleteLocked(e.pos-1, e.pos)
		case c == 0x01:
			flush()
			e.pos = 0
		case c == 0x05:
			flush()
			e.pos = len(e.line)
		case c == 0x02:
			flush()
			e.pos = max(e.pos-1, 0)
		case c == 0x06:
			flush()
			e.pos = min(e.pos+1, len(e.line))
		case c == 0x0b: // Ctrl-K
			flush()
			e.deleteLocked(e.pos, len(e.line))
		case c == 0x15: // Ctrl-U
			flush()
			e.deleteLocked(0, e.pos)
		case c == 0x17: // Ctrl-W
			flush()
			e.deleteLocked(e.wordStart(), e.pos)
		case c == 0x10:
			flush()
			e.historyLocked(-1, histPos, draft)
		case c == 0x0e:
			flush()
			e.historyLocked(1, histPos, draft)
		case c == '\t':
			flush()
			e.completeLocked()
		case c == 0x1a: // Ctrl-Z
			flush()
			e.suspendLocked()
		case c == 0x0c: // Ctrl-L
			flush()
			io.WriteString(e.out, "\x1b[H\x1b[2J")
			e.row = 0
		case c < 0x20:
			flush() // other controls are ignored
		default:
			if c >= 0x80 && !utf8.FullRune(b) {
				e.pending = append(e.pending, b...)
				flush()
				return nil, false
			}
			_, size := utf8.DecodeRune(b)
			typed = append(typed, b[:size]...)
			b = b[size:]
			continue
		}
		b = b[1:]
	}
	flush()
	return nil, false
}

// escapeKey reads one escape sequence at the start of b and names the key;
// n is 0 when b holds only part of it.
func escapeKey(b []byte) (n int, key string) {
	if len(b) < 2 {
		return 0, ""
	}
	switch b[1] {
	case '[':
		j := 2
		for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == ';') {
			j++
		}
		if j == len(b) {
			if j > 32 {
				return j, "" // not a sequence we know: drop it
			}
			return 0, ""
		}
		params, final := string(b[2:j]), b[j]
		n = j + 1
		switch final {
		case 'A':
			return n, "up"
		case 'B':
			return n, "down"
		case 'C':
			if strings.HasSuffix(params, ";5") || strings.HasSuffix(params, ";3") {
				return n, "wordright"
			}
			return n, "right"
		case 'D':
			if strings.HasSuffix(params, ";5") || strings.HasSuffix(params, ";3") {
				return n, "wordleft"
			}
			return n, "left"
		case 'H':
			return n, "home"
		case 'F':
			return n, "end"
		case '~':
			switch params {
			case "1", "7":
				return n, "home"
			case "4", "8":
				return n, "end"
			case "3":
				return n, "delete"
			case "200":
				return n, "paste"
			}
		}
		return n, ""
	case 'O':
		if len(b) < 3 {
			return 0, ""
		}
		switch b[2] {
		case 'H':
			return 3, "home"
		case 'F':
			return 3, "end"
		case 'A':
			return 3, "up"
		case 'B':
			return 3, "down"
		case 'C':
			return 3, "right"
		case 'D':
			return 3, "left"
		}
		return 3, ""
	case '\r', '\n':
		return 2, "newline"
	case 'b':
		return 2, "wordleft"
	case 'f':
		return 2, "wordright"
	}
	return 2, ""
}

// insertLocked inserts s at the cursor, unless the line would grow past
// maxEditorRunes. Line breaks are kept, as "\n" (a pasted text keeps its
// lines); tabs become spaces.
func (e *termEditor) insertLocked(s string) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\r':
			return '\n'
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
	if s == "" {
		return
	}
	if utf8.RuneCountInString(e.text())+utf8.RuneCountInString(s) > maxEditorRunes {
		io.WriteString(e.out, "\a")
		return
	}
	before := strings.Join(e.line[:e.pos], "")
	after := strings.Join(e.line[e.pos:], "")
	e.line = clusters(before + s + after)
	// The cursor stays before the text that followed it; a cluster can
	// only merge across the join, so count from the end.
	e.pos = len(e.line) - len(clusters(after))
	if e.pos < 0 {
		e.pos = 0
	}
}

// pasteLocked inserts a bracketed paste in one piece, or refuses it whole
// when the line would be longer than a message may be; either way it is
// drawn once, not character by character.
func (e *termEditor) pasteLocked() {
	text := string(e.paste)
	e.paste = e.paste[:0]
	n := utf8.RuneCountInString(text)
	if total := utf8.RuneCountInString(e.text()) + n; total > host.MaxMessageRunes {
		e.writeAboveLocked([]byte(fmt.Sprintf("paste refused: it would make the message %d characters long and the limit is %d (nothing was inserted)\n", total, host.MaxMessageRunes)))
		return
	}
	e.insertLocked(text)
}

// deleteLocked removes the clusters [from, to), clipped to the line.
func (e *termEditor) deleteLocked(from, to int) {
	from, to = max(from, 0), min(to, len(e.line))
	if from >= to {
		return
	}
	e.line = clusters(strings.Join(e.line[:from], "") + strings.Join(e.line[to:], ""))
	e.pos = min(from, len(e.line))
}

// historyLocked moves through the history: dir -1 is older, 1 newer; the
// line being typed is kept as the newest entry.
func (e *termEditor) historyLocked(dir int, histPos *int, draft *string) {
	next := *histPos + dir
	if next < 0 || next > len(e.history) {
		return
	}
	if *histPos == len(e.history) {
		*draft = e.text()
	}
	*histPos = next
	text := *draft
	if next < len(e.history) {
		text = e.history[next]
	}
	e.line = clusters(text)
	e.pos = len(e.line)
}

func (e *termEditor) wordStart() int {
	i := e.pos
	for i > 0 && blank(e.line[i-1]) {
		i--
	}
	for i > 0 && !blank(e.line[i-1]) {
		i--
	}
	return i
}

func (e *termEditor) wordEnd() int {
	i := e.pos
	for i < len(e.line) && blank(e.line[i]) {
		i++
	}
	for i < len(e.line) && !blank(e.line[i]) {
		i++
	}
	return i
}

// blank is a cluster that separates words: a space or a line break.
func blank(c string) bool { return c == " " || c == "\n" }

// clusters splits s into grapheme clusters.
func clusters(s string) []string {
	var out []string
	g := graphemes.FromString(s)
	for g.Next() {
		out = append(out, g.Value())
	}
	return out
}

// clusterWidth is the columns a cluster takes on the terminal.
func clusterWidth(c string) int {
	if len(c) == 1 && c[0] >= 0x20 && c[0] < 0x7f {
		return 1
	}
	return width.StringWidth(c)
}

// layout places the prompt and the line on a terminal cols wide, as the
// terminal wraps them (a wide character that does not fit the rest of a
// row goes to the next), and returns the row and column where the cursor
// stands and where the text ends.
func (e *termEditor) layout(cols int) (crow, ccol, erow, ecol int) {
	row, col := 0, 0
	place := func(w int) {
		if col+w > cols {
			row, col = row+1, 0
		}
		col += w
	}
	for _, c := range clusters(e.prompt) {
		place(clusterWidth(c))
	}
	for i, c := range e.line {
		if i == e.pos {
			crow, ccol = row, col
			if col == cols && c != "\n" {
				crow, ccol = row+1, 0
			}
		}
		if c == "\n" {
			// The drawing writes "\r\n" and the continuation prompt.
			row, col = row+1, 0
			for _, p := range clusters(contPrompt) {
				place(clusterWidth(p))
			}
			continue
		}
		place(clusterWidth(c))
	}
	if e.pos >= len(e.line) {
		crow, ccol = row, col
		if col == cols {
			crow, ccol = row+1, 0
		}
	}
	return crow, ccol, row, col
}

func (e *termEditor) cols() int {
	w, _, err := term.GetSize(e.fd)
	if err != nil || w <= 0 {
		return 80
	}
	return w
}

// redrawLocked draws the prompt and the line again in one write: back to
// the drawing's first row, clear to the end of the screen, write, and put
// the cursor on its column.
func (e *termEditor) redrawLocked() {
	cols := e.cols()
	var b strings.Builder
	if e.row > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", e.row)
	}
	b.WriteString("\r\x1b[J")
	b.WriteString(e.prompt)
	b.WriteString(strings.ReplaceAll(e.text(), "\n", "\r\n"+contPrompt))
	crow, ccol, erow, ecol := e.layout(cols)
	if ecol == cols {
		// The terminal holds the cursor on the last column until the
		// next character; start the next row now so the rows add up.
		b.WriteString("\r\n")
		erow, ecol = erow+1, 0
	}
	if up := erow - crow; up > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", up)
	}
	b.WriteString("\r")
	if ccol > 0 {
		fmt.Fprintf(&b, "\x1b[%dC", ccol)
	}
	_ = ecol
	e.row = crow
	io.WriteString(e.out, b.String())
}

// moveToEndLocked puts the cursor after the last character of the line.
func (e *termEditor) moveToEndLocked() {
	e.pos = len(e.line)
	e.redrawLocked()
}

// clearLocked erases the drawing and leaves the cursor at its start.
func (e *termEditor) clearLocked() {
	if e.row > 0 {
		fmt.Fprintf(e.out, "\x1b[%dA", e.row)
	}
	io.WriteString(e.out, "\r\x1b[J")
	e.row = 0
}

func (e *termEditor) showPrompt(prompt string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if prompt == "" {
		prompt = replPrompt
	}
	e.prompt = prompt
	if !e.reading {
		return
	}
	// Output may have come since the last drawing (a turn's answer,
	// which ends its last line): draw on the row the cursor is on now,
	// not where the old drawing was.
	e.row = 0
	e.redrawLocked()
}

func (e *termEditor) retire(question string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.reading {
		return
	}
	e.clearLocked()
	e.prompt = replPrompt
	e.line, e.pos = nil, 0
	io.WriteString(e.errw, strings.TrimRight(question, " ")+"\r\n")
	e.redrawLocked()
}

func (e *termEditor) writeAbove(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.reading {
		return e.errw.Write(p)
	}
	e.writeAboveLocked(bytes.TrimPrefix(p, []byte("\n")))
	return len(p), nil
}

// writeAboveLocked writes p on rows of its own above the line, which is
// drawn again below it.
func (e *termEditor) writeAboveLocked(p []byte) {
	if !e.reading {
		e.errw.Write(p)
		return
	}
	e.clearLocked()
	text := strings.ReplaceAll(strings.TrimRight(string(p), "\n"), "\n", "\r\n")
	io.WriteString(e.errw, text+"\r\n")
	e.redrawLocked()
}

// startSearchLocked enters the backward history search (Ctrl-R).
func (e *termEditor) startSearchLocked() {
	e.searching, e.query, e.hit = true, "", len(e.history)
	e.before = append([]string(nil), e.line...)
	e.mainPrompt = e.prompt
	e.showSearchLocked()
}

// searchKeyLocked handles a key of the search at the start of b: text
// extends the query, Ctrl-R finds an older match, Backspace shortens the
// query, Ctrl-G and Esc give the search up. ok is false for any other key,
// which ends the search with the match taken.
func (e *termEditor) searchKeyLocked(b []byte) (n int, ok bool) {
	switch c := b[0]; {
	case c == 0x12:
		e.findLocked(e.hit - 1)
		return 1, true
	case c == 0x7f || c == 0x08:
		if q := []rune(e.query); len(q) > 0 {
			e.query = string(q[:len(q)-1])
		}
		e.findLocked(len(e.history) - 1)
		return 1, true
	case c == 0x07 || (c == 0x1b && len(b) == 1):
		e.endSearchLocked(false)
		return 1, true
	case c >= 0x20 && c != 0x7f:
		if !utf8.FullRune(b) {
			return 0, false
		}
		r, size := utf8.DecodeRune(b)
		e.query += string(r)
		e.findLocked(min(e.hit, len(e.history)-1))
		return size, true
	}
	return 0, false
}

// findLocked shows the newest history entry at or before from that holds
// the query; the line stays as it is when there is none.
func (e *termEditor) findLocked(from int) {
	for i := min(from, len(e.history)-1); i >= 0; i-- {
		if strings.Contains(e.history[i], e.query) {
			e.hit = i
			e.line = clusters(e.history[i])
			e.pos = len(e.line)
			break
		}
	}
	e.showSearchLocked()
}

func (e *termEditor) showSearchLocked() {
	e.prompt = "(search " + strconvQuote(e.query) + ") "
}

// endSearchLocked leaves the search, keeping the match or, when cancelled,
// the line as it was.
func (e *termEditor) endSearchLocked(keep bool) {
	e.searching = false
	e.prompt = e.mainPrompt
	if !keep {
		e.line = e.before
		e.pos = len(e.line)
	}
}

func strconvQuote(s string) string { return "'" + s + "'" }
