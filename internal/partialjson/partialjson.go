// Package partialjson turns the beginning of a JSON text into a whole one:
// the arguments of a tool call the model is still writing, shown to an MCP
// Apps view before the call starts (ui/notifications/tool-input-partial).
package partialjson

import "unicode/utf8"

// Bounds of the work Repair does: one pass over at most MaxInput bytes,
// with at most MaxDepth nested arrays and objects.
const (
	MaxInput = 8 << 20
	MaxDepth = 512
)

// Repair returns a valid JSON text for prefix, the beginning of a JSON
// text: open strings, arrays and objects are closed, and what cannot be
// completed without guessing is dropped (a dangling key or a key without
// its value, an unfinished number or literal, a trailing comma, an escape
// or a UTF-8 character cut in two). Whitespace after the last complete
// value is dropped too. A whole JSON text comes back as it was, less its
// trailing whitespace.
//
// Repair returns nil, "not yet", when prefix has nothing complete yet
// (empty, an unfinished number or literal at the top), when it is not the
// beginning of any JSON text, when it is longer than MaxInput or when it
// nests deeper than MaxDepth. It never modifies prefix.
func Repair(prefix []byte) []byte {
	if len(prefix) > MaxInput {
		return nil
	}
	r := repairer{in: prefix, cut: -1}
	end, ok := r.scan()
	if !ok {
		return nil
	}
	if end >= 0 { // ends inside a string value: close it, then the rest
		out := make([]byte, 0, end+1+len(r.stack))
		out = append(out, prefix[:end]...)
		out = append(out, '"')
		return closeAll(out, r.stack)
	}
	if r.cut < 0 {
		return nil
	}
	out := make([]byte, 0, r.cut+r.cutDepth)
	out = append(out, prefix[:r.cut]...)
	return closeAll(out, r.stack[:r.cutDepth])
}

func closeAll(out, stack []byte) []byte {
	for i := len(stack) - 1; i >= 0; i-- {
		out = append(out, stack[i])
	}
	return out
}

// What the scanner expects next.
type state int

const (
	wantValue state = iota // a value (in an array, after a colon, at the top)
	wantKey                // an object's key
	wantColon              // the colon after a key
	wantNext               // a comma or the end of the container, after a value
)

// repairer scans its input once. cut and cutDepth record the last point
// where the input so far, closed, is valid: in[:cut] followed by the
// closers of stack[:cutDepth]. Every closing bracket is such a point, so
// stack[:cutDepth] is never popped after it was recorded.
type repairer struct {
	in       []byte
	stack    []byte // the closers of the open containers, '}' or ']'
	st       state
	closeOK  bool // the container was just opened: it may close at once
	cut      int
	cutDepth int
}

func (r *repairer) commit(i int) { r.cut, r.cutDepth = i, len(r.stack) }

// scan runs to the end of the input. It returns ok false when the input
// cannot begin a JSON text, and end ≥ 0 when the input ends inside a
// string value, whose text up to in[:end] is whole.
func (r *repairer) scan() (end int, ok bool) {
	in := r.in
	n := len(in)
	for i := 0; i < n; {
		c := in[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			i++
			continue
		}
		if r.closeOK && len(r.stack) > 0 && c == r.stack[len(r.stack)-1] {
			r.pop(i + 1)
			i++
			continue
		}
		r.closeOK = false
		switch r.st {
		case wantColon:
			if c != ':' {
				return -1, false
			}
			r.st = wantValue
			i++
		case wantNext:
			if len(r.stack) == 0 {
				return -1, false // more after the whole text
			}
			switch top := r.stack[len(r.stack)-1]; {
			case c == top:
				r.pop(i + 1)
			case c == ',' && top == '}':
				r.st = wantKey
			case c == ',':
				r.st = wantValue
			default:
				return -1, false
			}
			i++
		case wantKey:
			if c != '"' {
				return -1, false
			}
			j, _, status := scanString(in, i)
			switch status {
			case bad:
				return -1, false
			case short:
				return -1, true // a dangling key: dropped
			}
			r.st = wantColon
			i = j
		case wantValue:
			switch {
			case c == '{' || c == '[':
				if len(r.stack) >= MaxDepth {
					return -1, false
				}
				if c == '{' {
					r.stack = append(r.stack, '}')
					r.st = wantKey
				} else {
					r.stack = append(r.stack, ']')
					r.st = wantValue
				}
				r.closeOK = true
				i++
				r.commit(i)
			case c == '"':
				j, safe, status := scanString(in, i)
				switch status {
				case bad:
					return -1, false
				case short:
					return safe, true
				}
				i = j
				r.value(i)
			case c == '-' || c >= '0' && c <= '9':
				j, status := scanNumber(in, i)
				switch status {
				case bad:
					return -1, false
				case short:
					return -1, true
				}
				i = j
				r.value(i)
			case c == 't' || c == 'f' || c == 'n':
				word := "null"
				if c == 't' {
					word = "true"
				} else if c == 'f' {
					word = "false"
				}
				m := 0
				for m < len(word) && i+m < n && in[i+m] == word[m] {
					m++
				}
				if m < len(word) {
					if i+m == n {
						return -1, true // an unfinished literal: dropped
					}
					return -1, false
				}
				i += m
				r.value(i)
			default:
				return -1, false
			}
		}
	}
	return -1, true
}

// value records a complete value ending before in[i].
func (r *repairer) value(i int) {
	r.st = wantNext
	r.commit(i)
}

// pop closes the innermost container, whose closer ends before in[i].
func (r *repairer) pop(i int) {
	r.stack = r.stack[:len(r.stack)-1]
	r.closeOK = false
	r.value(i)
}

// How a string or number at the end of the input ended.
type status int

const (
	whole status = iota
	short        // the input ended inside it
	bad          // it cannot be part of a JSON text
)

// scanString reads the string starting at in[i] (a quote). It returns the
// index after its closing quote; or, when the input ends first, safe: the
// end of its last whole character or escape.
func scanString(in []byte, i int) (next, safe int, st status) {
	n := len(in)
	j := i + 1
	for j < n {
		switch c := in[j]; {
		case c == '"':
			return j + 1, 0, whole
		case c == '\\':
			if j+1 >= n {
				return 0, j, short
			}
			switch in[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= n {
						return 0, j, short
					}
					if !isHex(in[k]) {
						return 0, 0, bad
					}
				}
				j += 6
			default:
				return 0, 0, bad
			}
		case c < 0x20:
			return 0, 0, bad
		default:
			j++
		}
	}
	// The input ends inside the string: leave out a character cut in two.
	safe = n
	for k := 1; k <= utf8.UTFMax-1 && n-k > i; k++ {
		if b := in[n-k]; utf8.RuneStart(b) {
			if b >= utf8.RuneSelf && !utf8.FullRune(in[n-k:]) {
				safe = n - k
			}
			break
		}
	}
	return 0, safe, short
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// scanNumber reads the number starting at in[i]. A number the input ends
// in is whole if it is a valid number as it stands ("12", not "12." or
// "-").
func scanNumber(in []byte, i int) (next int, st status) {
	n := len(in)
	j := i
	digits := func() int {
		k := j
		for j < n && in[j] >= '0' && in[j] <= '9' {
			j++
		}
		return j - k
	}
	// need reports what a missing part means: short at the end of the
	// input, bad before anything else.
	need := func() (int, status) {
		if j >= n {
			return 0, short
		}
		return 0, bad
	}
	if in[j] == '-' {
		j++
	}
	switch {
	case j < n && in[j] == '0':
		j++
	case digits() == 0:
		return need()
	}
	if j < n && in[j] == '.' {
		j++
		if digits() == 0 {
			return need()
		}
	}
	if j < n && (in[j] == 'e' || in[j] == 'E') {
		j++
		if j < n && (in[j] == '+' || in[j] == '-') {
			j++
		}
		if digits() == 0 {
			return need()
		}
	}
	return j, whole
}
