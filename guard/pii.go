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
//     and last 4 (138****5678); also written 138 1234 5678, 138-1234-5678,
//     138.1234.5678, +8613812345678 or +86-138-1234-5678;
//   - 18-character national ids, 17 digits and a digit or X, keep the first
//     4 and last 2 (1101************1X); also written in groups of 6, 8 and
//     4 (110101 19900307 1234) when the groups read as a region and a birth
//     date;
//   - bank cards of 13 to 19 digits, keep the first 4 and last 4, also
//     written in groups of four separated by spaces or dashes.
//
// A number counts only as a whole: digits next to a candidate make it a
// different, longer number (a 20-digit run is not a card, a phone number
// inside a longer run is not a phone). Likewise a run touching an ASCII
// letter, "_" or "*" is part of an identifier (a tracking number like
// SF1234567890123, a hash, a masked number) and a run next to a decimal
// point followed or preceded by a digit is part of a decimal number. The
// exception is a mobile number glued to a word or label (tel13812345678,
// 13812345678abc): people write those, while a carrier or order code
// glued to digits is upper case (SF13812345678 stays). Every 18-digit run
// is masked as an id, which hides more than a card mask would.
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

func (r span) len() int { return r.end - r.start }

// chunkAt returns the digit runs of the chunk starting at i: runs of digits
// joined by single spaces, dashes or dots, the way card and phone numbers
// are grouped when written by hand. Only some shapes of groups are numbers
// to mask (see maskGrouped); the others are judged run by run.
func chunkAt(s string, i int) []span {
	var runs []span
	for {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		runs = append(runs, span{start, i})
		if i+1 < len(s) && (s[i] == ' ' || s[i] == '-' || s[i] == '.') && isDigit(s[i+1]) {
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

// maskGrouped recognises a phone number written 3-4-4 (after +86 or not),
// a national id written 6-8-4, and a card written in groups of four (the
// last group may be shorter), with one kind of separator throughout. Dots
// group phone numbers only: dotted groups of four are versions and
// addresses far more often than cards.
func maskGrouped(s string, runs []span) (span, bool) {
	if len(runs) == 4 && runs[0].len() == 2 && s[runs[0].start:runs[0].end] == "86" && runs[0].start > 0 && s[runs[0].start-1] == '+' {
		// +86 and the separator after it, then the number itself.
		return maskGroupedMobile(s, runs[1:])
	}
	if m, ok := maskGroupedMobile(s, runs); ok {
		return m, true
	}
	first, last := runs[0], runs[len(runs)-1]
	sepChar := s[first.end]
	if sepChar == '.' || !standsAloneLeft(s, first.start) || !sameSeparator(s, runs, sepChar) {
		return span{}, false
	}
	if m, ok := maskGroupedID(s, runs); ok {
		return m, true
	}
	if !standsAloneRight(s, last.end) {
		return span{}, false
	}
	total := 0
	for _, r := range runs {
		total += r.len()
	}
	if len(runs) < 4 || total < 13 || total > 19 {
		return span{}, false
	}
	for _, r := range runs[:len(runs)-1] {
		if r.len() != 4 {
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

// sameSeparator reports whether every run after the first follows sep.
func sameSeparator(s string, runs []span, sep byte) bool {
	for _, r := range runs[1:] {
		if s[r.start-1] != sep {
			return false
		}
	}
	return true
}

// maskGroupedMobile recognises a mobile number written in groups of 3, 4
// and 4 and masks the middle group.
func maskGroupedMobile(s string, runs []span) (span, bool) {
	if len(runs) != 3 || runs[0].len() != 3 || runs[1].len() != 4 || runs[2].len() != 4 ||
		!sameSeparator(s, runs, s[runs[0].end]) ||
		!mobileAloneLeft(s, runs[0].start) || !mobileAloneRight(s, runs[2].end) ||
		!isMobile(s[runs[0].start:runs[0].end]+s[runs[1].start:runs[1].end]+s[runs[2].start:runs[2].end]) {
		return span{}, false
	}
	return runs[1], true
}

// maskGroupedID recognises a national id written in groups of 6, 8 and 4
// (or 3 and the X), the region, birth date and sequence, and keeps the
// first 4 and last 2 characters. The caller has checked the left edge and
// the separators.
func maskGroupedID(s string, runs []span) (span, bool) {
	if len(runs) != 3 || runs[0].len() != 6 || runs[1].len() != 8 {
		return span{}, false
	}
	last := runs[2]
	var end int
	switch {
	case last.len() == 4 && standsAloneRight(s, last.end):
		end = last.end - 2
	case last.len() == 3 && last.end < len(s) && (s[last.end] == 'X' || s[last.end] == 'x') && standsAloneRight(s, last.end+1):
		end = last.end - 1
	default:
		return span{}, false
	}
	if s[runs[0].start] < '1' || s[runs[0].start] > '8' || !isBirthDate(s[runs[1].start:runs[1].end]) {
		return span{}, false
	}
	return span{runs[0].start + 4, end}, true
}

// isBirthDate reports whether eight digits read as a date from 1800 to
// 2099 (the day is checked against 31 only).
func isBirthDate(d string) bool {
	century := d[:2]
	month := int(d[4]-'0')*10 + int(d[5]-'0')
	day := int(d[6]-'0')*10 + int(d[7]-'0')
	return (century == "18" || century == "19" || century == "20") && month >= 1 && month <= 12 && day >= 1 && day <= 31
}

// maskRun judges one run of digits (with a national id's trailing X).
func maskRun(s string, r span) (span, bool) {
	n := r.len()
	digits := s[r.start:r.end]
	if n == 11 && isMobile(digits) && mobileAloneLeft(s, r.start) && mobileAloneRight(s, r.end) {
		return span{r.start + 3, r.start + 7}, true
	}
	if !standsAloneLeft(s, r.start) {
		return span{}, false
	}
	if n == 17 && r.end < len(s) && (s[r.end] == 'X' || s[r.end] == 'x') && standsAloneRight(s, r.end+1) {
		return span{r.start + 4, r.end - 1}, true
	}
	if !standsAloneRight(s, r.end) {
		return span{}, false
	}
	switch {
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

// mobileAloneLeft is standsAloneLeft for a mobile number, which may also be
// glued to a word or label before it (tel13812345678): a run of ASCII
// letters that stands alone itself and is not an upper-case code.
func mobileAloneLeft(s string, i int) bool {
	if standsAloneLeft(s, i) {
		return true
	}
	j := i
	for j > 0 && isLetter(s[j-1]) {
		j--
	}
	return j < i && (j == 0 || !isIdentByte(s[j-1])) && isWordOrLabel(s[j:i])
}

// mobileAloneRight is mobileAloneLeft for the end of the number
// (13812345678abc).
func mobileAloneRight(s string, i int) bool {
	if standsAloneRight(s, i) {
		return true
	}
	j := i
	for j < len(s) && isLetter(s[j]) {
		j++
	}
	return j > i && (j == len(s) || !isIdentByte(s[j])) && isWordOrLabel(s[i:j])
}

// isWordOrLabel reports whether letters glued to a mobile number read as a
// word (any lower-case letter: tel, Phone, abc) or an upper-case phone
// label, rather than a code such as SF or JD.
func isWordOrLabel(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= 'a' && w[i] <= 'z' {
			return true
		}
	}
	switch w {
	case "TEL", "PHONE", "MOBILE", "MOB", "CELL":
		return true
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

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
