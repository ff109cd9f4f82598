// Package textsafe shows text that came from outside the program on one
// line of a terminal or a log without letting it change what the reader
// sees. Tool names and arguments from an MCP server, model output and a
// server's stray output lines all pass through here before they reach
// --trace, a confirmation question or a log line, because any of them can
// hold a terminal escape sequence that repaints the screen, a newline that
// forges a line of its own, or a bidirectional override that shows text in
// another order than it is stored.
//
// The escaping rule, the same everywhere in the program:
//
//   - newline, carriage return and tab are written \n, \r and \t;
//   - the other ASCII control characters (U+0000–U+001F and DEL, U+007F)
//     are written \xHH, and so is each byte that is not part of valid
//     UTF-8;
//   - every other character that is invisible or moves text around is
//     written \uHHHH, or \UHHHHHHHH above U+FFFF: the C1 controls
//     (U+0080–U+009F), the format characters (Unicode category Cf: the
//     bidirectional embeddings, overrides and isolates U+202A–U+202E and
//     U+2066–U+2069, the directional marks, the zero-width characters
//     U+200B–U+200D and U+2060, U+FEFF, the soft hyphen, the tag characters
//     U+E0000–U+E007F and the rest of the category) and the line and
//     paragraph separators U+2028 and U+2029;
//   - everything else, including letters of any script, CJK text, emoji
//     and the backslash itself, is written as it is.
//
// Hex digits are lower case, and each escape is spelled as Go's
// strconv.Quote spells it. The backslash is not escaped, so that JSON
// (which has escapes of its own) stays readable; an escaped text is for
// people to read and cannot be turned back into the original.
package textsafe

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could break the line or
// change how it looks written as a visible escape, by the rule in the
// package documentation. A string that needs no escape is returned as it
// is, without a copy.
func Escape(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			b = appendHex(b, `\x`, rune(s[i]), 2)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r == '\t':
			b = append(b, `\t`...)
		case !hidden(r):
			b = append(b, s[i:i+w]...)
		case r < utf8.RuneSelf:
			b = appendHex(b, `\x`, r, 2)
		case r <= 0xFFFF:
			b = appendHex(b, `\u`, r, 4)
		default:
			b = appendHex(b, `\U`, r, 8)
		}
		i += w
	}
	return string(b)
}

// Preview returns s escaped (Escape) and cut to at most max characters, so
// that one value cannot flood a line. A cut value ends with how much was
// left out and how long the whole was, as in "…(+340 chars, 460 total)",
// so a reader knows the value was not that short.
//
// Characters are counted in s before escaping: a rune is one character
// and so is each byte that is not valid UTF-8. The cut therefore never
// falls inside a multi-byte character, and an escape never counts as
// more than the one character it stands for. A max below zero counts as
// zero.
func Preview(s string, max int) string {
	if max < 0 {
		max = 0
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
		return Escape(s)
	}
	return Escape(s[:end]) + "…(+" + strconv.Itoa(n-max) + " chars, " + strconv.Itoa(n) + " total)"
}

// hidden reports the characters Escape writes as an escape (besides the
// invalid bytes): controls, format characters, and the line and paragraph
// separators.
func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

// firstUnsafe returns the index of the first byte of s that Escape would
// change, or len(s) when there is none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return i
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && w == 1) || hidden(r) {
			return i
		}
		i += w
	}
	return len(s)
}

const hexDigits = "0123456789abcdef"

// appendHex appends prefix and then r as the given number of lower-case
// hex digits.
func appendHex(b []byte, prefix string, r rune, digits int) []byte {
	b = append(b, prefix...)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hexDigits[r>>uint(shift)&0xf])
	}
	return b
}
