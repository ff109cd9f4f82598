package chat

import (
	"io"
	"testing"
	"unicode/utf8"
)

// FuzzEditorKeys: any bytes from the terminal, in any chunks, leave the
// editor with a line of valid clusters, within its bound, and the cursor
// on it; nothing panics.
func FuzzEditorKeys(f *testing.F) {
	for _, seed := range []string{
		"出差住宿标准是多少？\x1b[D\x1b[D\x01\x05\x7f",
		"ab😀e\u0301z\x1b[D\x1b[3~\x17\x15",
		pasteStart + "粘贴\n两行" + pasteEnd,
		"\x1b[1;5D\x1b[1;5C\x1bb\x1bf\x1bOH\x1bOF\x1b[200~",
		"\xe5\x87", "\x1b[", "\x1b[99999999999999999999999999999999999z",
		pasteStart + "行一\r\n行二\rline 3\n" + pasteEnd + "\x1b\r四\x1b[D\x17\x7f",
	} {
		f.Add(seed, 3)
	}
	f.Fuzz(func(t *testing.T, input string, cut int) {
		e := &termEditor{out: io.Discard, errw: io.Discard, fd: -1, reading: true, prompt: replPrompt}
		histPos, draft := 0, ""
		e.history = []string{"older", "新的"}
		histPos = len(e.history)
		// 16 KiB of keys is enough to reach the line's cap (8,000
		// characters); longer inputs only make each run slower.
		if len(input) > 16<<10 {
			input = input[:16<<10]
		}
		b := []byte(input)
		if cut < 0 {
			cut = -cut
		}
		// Short inputs arrive a few bytes at a time, so every split of an
		// escape sequence or a UTF-8 character is tried; long ones in at most
		// about 512 reads, because each read redraws the whole line (as a
		// terminal delivers a long unbracketed paste: in large reads).
		chunk := cut%7 + 1 + len(b)/512
		for len(b) > 0 {
			n := min(len(b), chunk)
			if _, done := e.handleLocked(b[:n], &histPos, &draft); done {
				e.line, e.pos = nil, 0
			}
			b = b[n:]
		}
		if e.pos < 0 || e.pos > len(e.line) {
			t.Fatalf("cursor %d outside the line of %d clusters", e.pos, len(e.line))
		}
		if n := utf8.RuneCountInString(e.text()); n > maxEditorRunes {
			t.Fatalf("line of %d runes, over %d", n, maxEditorRunes)
		}
		e.redrawLocked()
	})
}

// TestEditorHistorySearch: Ctrl-R finds the newest line holding what is
// typed, Ctrl-R again an older one, Enter sends the match, Ctrl-G gives the
// search up and keeps the line as it was.
func TestEditorHistorySearch(t *testing.T) {
	e := &termEditor{out: io.Discard, errw: io.Discard, fd: -1, reading: true, prompt: replPrompt}
	e.history = []string{"订单 A-1024 到哪了？", "hello", "订单 B-0001 到哪了？"}
	histPos, draft := len(e.history), ""
	keys := func(s string) (error, bool) { return e.handleLocked([]byte(s), &histPos, &draft) }
	keys("draft")
	if _, done := keys("\x12订单"); done || e.text() != "订单 B-0001 到哪了？" || e.prompt != "(search '订单') " {
		t.Fatalf("first match %q, prompt %q", e.text(), e.prompt)
	}
	keys("\x12")
	if e.text() != "订单 A-1024 到哪了？" {
		t.Fatalf("older match %q", e.text())
	}
	if err, done := keys("\r"); err != nil || !done || e.text() != "订单 A-1024 到哪了？" || e.prompt != replPrompt {
		t.Fatalf("Enter: %v %v %q %q", err, done, e.text(), e.prompt)
	}
	e.line, e.pos = clusters("draft"), 5
	keys("\x12hel\x07")
	if e.text() != "draft" || e.searching {
		t.Fatalf("Ctrl-G kept %q (searching %v)", e.text(), e.searching)
	}
	keys("\x12hel\x1b[D")
	if e.text() != "hello" || e.searching || e.pos != 4 {
		t.Fatalf("a key after the search: %q pos %d", e.text(), e.pos)
	}
}
