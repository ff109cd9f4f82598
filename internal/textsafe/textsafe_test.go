package textsafe

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"ASCII", `plain text, "quotes" and a \backslash`, `plain text, "quotes" and a \backslash`},
		{"CJK", "出差住宿标准是多少？一线城市 600 元。", "出差住宿标准是多少？一线城市 600 元。"},
		{"other scripts", "한국어 日本語 Ελληνικά العربية עברית", "한국어 日本語 Ελληνικά العربية עברית"},
		{"ideographic space", "订单\u3000状态", "订单\u3000状态"},
		{"emoji above U+FFFF", "ok 😀👍", "ok 😀👍"},
		{"replacement character as text", "\ufffd", "\ufffd"},
		{"line breaks and tab", "a\nb\rc\td", `a\nb\rc\td`},
		{"C0 controls", "nul\x00 bell\x07 bs\x08 esc\x1b[2J", `nul\x00 bell\x07 bs\x08 esc\x1b[2J`},
		{"OSC title sequence", "\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"C1 controls", "\u0085 \u009b31m", `\u0085 \u009b31m`},
		{"bidi embeddings and overrides", "\u202a\u202b\u202c\u202d\u202e", `\u202a\u202b\u202c\u202d\u202e`},
		{"bidi isolates", "\u2066\u2067\u2068\u2069", `\u2066\u2067\u2068\u2069`},
		{"directional marks", "\u200e\u200f\u061c", `\u200e\u200f\u061c`},
		{"zero-width characters", "a\u200bb\u200cc\u200dd\u2060e", `a\u200bb\u200cc\u200dd\u2060e`},
		{"byte order mark", "\ufeffstart", `\ufeffstart`},
		{"soft hyphen", "co\u00adop", `co\u00adop`},
		{"tag characters", "flag\U000e0001\U000e0067\U000e0062\U000e007f", `flag\U000e0001\U000e0067\U000e0062\U000e007f`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"invalid byte", "\xff", `\xff`},
		{"invalid byte inside text", "a\xc3(b", `a\xc3(b`},
		{"rune cut in the middle", "字"[:2] + "!", `\xe5\xad!`},
		{"encoded surrogate", "\xed\xa0\x80", `\xed\xa0\x80`},
		{"trojan source", `"user` + "\u202e \u2066" + `// admin` + "\u2069 \u2066" + `"`, `"user\u202e \u2066// admin\u2069 \u2066"`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("%s: Escape(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// TestEscapeSpellsLikeStrconv checks the escapes against strconv.Quote for
// every character Escape escapes other than \t, \n and \r (which it writes
// as strconv does too) and the ASCII controls that strconv writes with a
// letter (\a, \b, \f, \v), which Escape writes in hex.
func TestEscapeSpellsLikeStrconv(t *testing.T) {
	for r := rune(0); r <= 0x10ffff; r++ {
		if !hidden(r) || !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		got := Escape(s)
		want := strconv.Quote(s)
		want = want[1 : len(want)-1]
		switch r {
		case '\a', '\b', '\f', '\v':
			continue
		}
		if got != want {
			t.Fatalf("Escape(%U) = %s, strconv.Quote spells it %s", r, got, want)
		}
	}
}

func TestPreview(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven chars", 10, "eleven cha…(+2 chars, 12 total)"},
		{"出差住宿标准是多少", 4, "出差住宿…(+5 chars, 9 total)"},
		{"一线\n城市\t600", 20, `一线\n城市\t600`},
		{"a\nb\nc\nd", 3, `a\nb…(+4 chars, 7 total)`},
		{"bell\x07 esc\x1b sep\u2028", 40, `bell\x07 esc\x1b sep\u2028`},
		{"", 5, ""},
		// The cut falls between characters, never inside one.
		{"字字字", 2, "字字…(+1 chars, 3 total)"},
		{"ab😀cd", 3, "ab😀…(+2 chars, 5 total)"},
		{"ab😀cd", 2, "ab…(+3 chars, 5 total)"},
		// An escaped character counts as one, as does an invalid byte.
		{"\u202e\u202e\u202e", 2, `\u202e\u202e…(+1 chars, 3 total)`},
		{"\xff\xfe\xfd", 2, `\xff\xfe…(+1 chars, 3 total)`},
		{"字"[:2] + "ab", 2, `\xe5\xad…(+2 chars, 4 total)`},
		{"\U000e0041\U000e0042x", 2, `\U000e0041\U000e0042…(+1 chars, 3 total)`},
		// A max of zero or less keeps only the note.
		{"abc", 0, "…(+3 chars, 3 total)"},
		{"abc", -1, "…(+3 chars, 3 total)"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		got := Preview(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("Preview(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Preview(%q, %d) = %q is not valid UTF-8", tt.in, tt.max, got)
		}
	}
}

func TestEscapeReturnsSafeInputUnchanged(t *testing.T) {
	s := strings.Repeat("订单 A-1024 已发货 ", 100)
	if got := Escape(s); got != s {
		t.Fatalf("Escape changed safe text: %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { Escape(s) }); n != 0 {
		t.Errorf("Escape of safe text allocates %v times, want 0", n)
	}
}

// FuzzEscape checks what every caller relies on: the result is valid
// UTF-8, stays on one line and holds no character Escape would escape, and
// text with nothing to escape comes back unchanged.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "出差", "a\nb", "\x1b[2J", "\u202e", "\U000e0041", "\xff", "字"[:2]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		if !utf8.ValidString(got) {
			t.Fatalf("Escape(%q) = %q is not valid UTF-8", s, got)
		}
		if i := firstUnsafe(got); i != len(got) {
			t.Fatalf("Escape(%q) = %q still holds %q at %d", s, got, got[i:], i)
		}
		if firstUnsafe(s) == len(s) && got != s {
			t.Fatalf("Escape(%q) = %q, want it unchanged", s, got)
		}
		p := Preview(s, 5)
		if !utf8.ValidString(p) || firstUnsafe(p) != len(p) {
			t.Fatalf("Preview(%q, 5) = %q is not safe", s, p)
		}
	})
}
