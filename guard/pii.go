package guard

import (
	"bytes"
	"encoding/json"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

// maskChar replaces each hidden digit. It also counts as part of an
// identifier when deciding whether digits stand alone, which is what makes
// masking idempotent: the visible remnants of a masked number always touch
// a mask character and are never masked again.
const maskChar = '*'

// MaskPII hides personal numbers in free text, keeping enough digits for a
// person to recognise which number is meant:
//
//   - mainland mobile numbers, 1[3-9] and 9 more digits, keep the first 3
//     and last 4 (138****5678); also written 138 1234 5678, 138-1234-5678
//     or +8613812345678;
//   - 18-character national ids, 17 digits and a digit or X, keep the first
//     4 and last 2 (1101************1X);
//   - bank cards of 13 to 19 digits, keep the first 4 and last 4, also
//     written in groups of four separated by spaces or dashes.
//
// A number counts only as a whole: digits next to a candidate make it a
// different, longer number (a 20-digit run is not a card, a phone number
// inside a longer run is not a phone). Likewise a run touching an ASCII
// letter, "_" or "*" is part of an identifier (a tracking number like
// SF1234567890123, a hash, a masked number) and a run next to a decimal
// point followed or preceded by a digit is part of a decimal number. Every
// 18-digit run is masked as an id, which hides more than a card mask would.
//
// Only ASCII digits are recognised. Masking is idempotent, changes nothing
// but digits (so valid UTF-8 stays valid) and returns s itself when nothing
// is masked.
func MaskPII(s string) string {
	var out []byte
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		runs := chunkAt(s, i)
		for _, m := range maskChunk(s, runs) {
			if out == nil {
				out = []byte(s)
			}
			for j := m.start; j < m.end; j++ {
				if isDigit(out[j]) {
					out[j] = maskChar
				}
			}
		}
		i = runs[len(runs)-1].end
	}
	if out == nil {
		return s
	}
	return string(out)
}

// span is a half-open byte range.
type span struct{ start, end int }

// chunkAt returns the digit runs of the chunk starting at i: runs of digits
// joined by single spaces or dashes, the way card and phone numbers are
// grouped when written by hand.
func chunkAt(s string, i int) []span {
	var runs []span
	for {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		runs = append(runs, span{start, i})
		if i+1 < len(s) && (s[i] == ' ' || s[i] == '-') && isDigit(s[i+1]) {
			i++
			continue
		}
		return runs
	}
}

// maskChunk returns the byte ranges of a chunk to mask (digits only are
// replaced within them). A grouped number takes the whole chunk; otherwise
// each run is judged on its own.
func maskChunk(s string, runs []span) []span {
	if len(runs) > 1 {
		if m, ok := maskGrouped(s, runs); ok {
			return []span{m}
		}
	}
	var ms []span
	for _, r := range runs {
		if m, ok := maskRun(s, r); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// maskGrouped recognises a phone number written 3-4-4 and a card written
// in groups of four (the last group may be shorter), with one kind of
// separator throughout.
func maskGrouped(s string, runs []span) (span, bool) {
	first, last := runs[0], runs[len(runs)-1]
	if !standsAloneLeft(s, first.start) || !standsAloneRight(s, last.end) {
		return span{}, false
	}
	sepChar := s[first.end]
	total := 0
	for i, r := range runs {
		if i > 0 && s[r.start-1] != sepChar {
			return span{}, false
		}
		total += r.end - r.start
	}
	if len(runs) == 3 && runs[0].end-runs[0].start == 3 && runs[1].end-runs[1].start == 4 && last.end-last.start == 4 &&
		isMobile(s[runs[0].start:runs[0].end]+s[runs[1].start:runs[1].end]+s[last.start:last.end]) {
		return runs[1], true
	}
	if len(runs) < 4 || total < 13 || total > 19 {
		return span{}, false
	}
	for _, r := range runs[:len(runs)-1] {
		if r.end-r.start != 4 {
			return span{}, false
		}
	}
	// Keep the first group and the last four digits.
	keepFrom := total - 4 // digit index where the kept tail starts
	end, seen := last.end, total
	for j := last.end - 1; j >= first.start; j-- {
		if isDigit(s[j]) {
			seen--
			if seen == keepFrom {
				end = j
				break
			}
		}
	}
	return span{runs[1].start, end}, true
}

// maskRun judges one run of digits (with a national id's trailing X).
func maskRun(s string, r span) (span, bool) {
	n := r.end - r.start
	if !standsAloneLeft(s, r.start) {
		return span{}, false
	}
	if n == 17 && r.end < len(s) && (s[r.end] == 'X' || s[r.end] == 'x') && standsAloneRight(s, r.end+1) {
		return span{r.start + 4, r.end - 1}, true
	}
	if !standsAloneRight(s, r.end) {
		return span{}, false
	}
	digits := s[r.start:r.end]
	switch {
	case n == 11 && isMobile(digits):
		return span{r.start + 3, r.start + 7}, true
	case n == 13 && r.start > 0 && s[r.start-1] == '+' && digits[:2] == "86" && isMobile(digits[2:]):
		return span{r.start + 5, r.start + 9}, true
	case n == 18:
		return span{r.start + 4, r.end - 2}, true
	case n >= 13 && n <= 19:
		return span{r.start + 4, r.end - 4}, true
	}
	return span{}, false
}

// isMobile reports an 11-digit mainland mobile number.
func isMobile(d string) bool {
	return len(d) == 11 && d[0] == '1' && d[1] >= '3' && d[1] <= '9'
}

// standsAloneLeft reports whether the digits starting at i are not the
// continuation of an identifier or a decimal number.
func standsAloneLeft(s string, i int) bool {
	if i == 0 {
		return true
	}
	c := s[i-1]
	if isIdentByte(c) {
		return false
	}
	return !(c == '.' && i >= 2 && isDigit(s[i-2]))
}

// standsAloneRight is standsAloneLeft for the end of a run.
func standsAloneRight(s string, i int) bool {
	if i >= len(s) {
		return true
	}
	c := s[i]
	if isIdentByte(c) {
		return false
	}
	return !(c == '.' && i+1 < len(s) && isDigit(s[i+1]))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == maskChar
}

// MaskJSON masks personal numbers inside a JSON document while keeping it
// valid JSON with the same structure:
//
//   - every string is decoded, masked with MaskPII and re-encoded if
//     anything changed; object keys are strings too and are masked as well,
//     because a map keyed by phone number would otherwise leak them all
//     (two keys may then read alike; JSON allows that);
//   - a number that is a bare run of digits qualifying as a phone number,
//     id or card is replaced by the masked digits as a string: the type
//     changes, but a phone number stored as a number is still a phone
//     number, and the model only reads the text.
//
// Everything else is kept byte for byte, and raw itself is returned when
// nothing is masked. Input that is not valid JSON is masked as text with
// MaskPII.
func MaskJSON(raw []byte) []byte {
	if !json.Valid(raw) {
		s := string(raw)
		if m := MaskPII(s); m != s {
			return []byte(m)
		}
		return raw
	}
	var out []byte
	last := 0
	replace := func(from, to int, with []byte) {
		out = append(out, raw[last:from]...)
		out = append(out, with...)
		last = to
	}
	// Outside strings, a digit or a minus sign can only start a number.
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '"':
			end := jsonscan.StringEnd(raw, i)
			lit := raw[i:end]
			if bytes.IndexByte(lit, '\\') >= 0 || countDigits(lit) >= 11 {
				if s, ok := jsonscan.String(lit); ok {
					if m := MaskPII(s); m != s {
						replace(i, end, encodeString(m))
					}
				}
			}
			i = end
		case c == '-' || isDigit(c):
			end := jsonscan.ValueEnd(raw, i)
			num := string(raw[i:end])
			if allDigits(num) {
				if m := MaskPII(num); m != num {
					replace(i, end, encodeString(m))
				}
			}
			i = end
		default:
			i++
		}
	}
	if out == nil {
		return raw
	}
	return append(out, raw[last:]...)
}

func countDigits(b []byte) int {
	n := 0
	for _, c := range b {
		if isDigit(c) {
			n++
		}
	}
	return n
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// encodeString encodes s as a JSON string without HTML escaping, so that
// text like the knowledge base's <<<DATA fences reads as written.
func encodeString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimRight(b.Bytes(), "\n")
}

// MaskText masks personal numbers in text that may be JSON: a JSON object
// or array is masked with MaskJSON so it stays valid, anything else with
// MaskPII. It is the one entry point for whoever formats text for the
// model (tool outputs, knowledge-base hits).
func MaskText(s string) string {
	t := bytes.TrimSpace([]byte(s))
	if len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		return string(MaskJSON([]byte(s)))
	}
	return MaskPII(s)
}
