package trace

import (
	"fmt"
	"strings"
	"unicode"
)

// Preview returns s on one line and cut to at most max characters (runes,
// so Chinese text is never split inside a character). A cut value ends with
// how much was left out and how long it was, e.g. "…(+340 chars, 460
// total)", so a reader knows the value was not that short. Newlines, tabs
// and other control characters are shown escaped (\n, \t, \x1b). max <= 0
// means DefaultPreview.
func Preview(s string, max int) string {
	if max <= 0 {
		max = DefaultPreview
	}
	n := 0
	end := len(s)
	for i := range s {
		if n == max {
			end = i
		}
		n++
	}
	if n <= max {
		return escape(s)
	}
	return fmt.Sprintf("%s…(+%d chars, %d total)", escape(s[:end]), n-max, n)
}

// escape makes control characters visible so a value stays on one line.
func escape(s string) string {
	if !strings.ContainsFunc(s, breaksLine) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x100 && breaksLine(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case breaksLine(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// breaksLine reports characters that could break a line or garble a
// terminal: control characters and the Unicode line and paragraph
// separators.
func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
