package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentapp/agentapp/mcpserver"
)

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":                     `""`,
		"escalateToHuman":      `"escalateToHuman"`,
		`say "hi" \ bye`:       `"say \"hi\" \\ bye"`,
		"docs://kb/\x01":       `"docs://kb/\u0001"`,
		"a\nb\tc\r":            `"a\nb\tc\r"`,
		"del\x7f":              `"del\u007f"`,
		"tag\U000E0001":        `"tag\udb40\udc01"`,
		"rtl\u202eoverride":    `"rtl\u202eoverride"`,
		"bad\xff":              `"bad\ufffd"`,
		"报销政策":                 `"报销政策"`,
		"esc\x1b[31mred":       `"esc\u001b[31mred"`,
		"line\u2028separator":  `"line\u2028separator"`,
		"zero\u200bwidth":      `"zero\u200bwidth"`,
		"nul\x00":              `"nul\u0000"`,
		"c1\u0085":             `"c1\u0085"`,
		"nbsp\u00a0":           `"nbsp\u00a0"`,
		"bom\ufeff":            `"bom\ufeff"`,
		"emoji 😀":              `"emoji 😀"`,
		"private\U000F0000use": `"private\udb80\udc00use"`,
	} {
		if got := mcpserver.Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
	long := strings.Repeat("é", mcpserver.QuoteLimit+10)
	if got, want := mcpserver.Quote(long), `"`+strings.Repeat("é", mcpserver.QuoteLimit)+`…"`; got != want {
		t.Errorf("Quote of %d characters = %s, want the first %d and an ellipsis", mcpserver.QuoteLimit+10, got, mcpserver.QuoteLimit)
	}
	exact := strings.Repeat("x", mcpserver.QuoteLimit)
	if got := mcpserver.Quote(exact); got != `"`+exact+`"` {
		t.Errorf("Quote of exactly QuoteLimit characters was cut: %s", got)
	}
}

// FuzzQuote checks Quote's promises on any input: a JSON string literal
// that decodes to the input (made valid UTF-8, cut to QuoteLimit
// characters), printable throughout, and bounded in length.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "\x01", "\U000E0001", "\xff\xfe", `"\`, "a\u2028b", strings.Repeat("\x00", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := mcpserver.Quote(s)
		var back string
		if err := json.Unmarshal([]byte(q), &back); err != nil {
			t.Fatalf("Quote(%q) = %s is not a JSON string: %v", s, q, err)
		}
		want := []rune(strings.ToValidUTF8(s, "\uFFFD"))
		// ToValidUTF8 replaces a run of bad bytes with one U+FFFD, Quote
		// each bad byte: compare only when the input was valid.
		if utf8.ValidString(s) {
			if len(want) > mcpserver.QuoteLimit {
				want = append(want[:mcpserver.QuoteLimit], '…')
			}
			if back != string(want) {
				t.Fatalf("Quote(%q) decodes to %q, want %q", s, back, string(want))
			}
		}
		for _, r := range q {
			if !unicode.IsPrint(r) {
				t.Fatalf("Quote(%q) = %s holds the unprintable %U", s, q, r)
			}
		}
		// Each character becomes at most 12 bytes (a surrogate pair).
		if len(q) > 12*mcpserver.QuoteLimit+len(`"…"`) {
			t.Fatalf("Quote of %d bytes is %d bytes long", len(s), len(q))
		}
	})
}
