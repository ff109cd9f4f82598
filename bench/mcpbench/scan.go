package mcpbench

import (
	"bytes"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

// The reader checks every frame the server writes. Decoding each one with
// json.Unmarshal into a Message, and each tools/call result once more into
// a ToolResult, cost the harness more CPU per call than some servers
// spend; on a 2-core machine that CPU is taken from the server being
// measured. So the reader walks a frame once, checking that it is valid
// JSON (what json.Valid accepts) as it finds the top-level members it
// reads, and walks a tools/call result once more to check it.
//
// The walk handles the shapes servers write. Whatever it is not sure to
// read exactly as json.Unmarshal would — a key with an escape, a key that
// matches one of ours only case-insensitively, a member given twice, an
// "error" that is not null, a method with an escape or non-ASCII — and
// whatever is not valid JSON goes to DecodeMessage and CheckToolResult,
// which decode with encoding/json. The fuzz tests hold both paths to the
// same answers and the same error messages.
//
// The validating walk below (walkObject, walkArray, validValue and the
// functions under it) is this reader's own: the other readers of JSON in
// agentapp run json.Valid first and then only find boundaries, with
// package jsonscan, which this reader uses too for the values it has
// already checked.

// decodeFrame is DecodeMessage, faster for the common shapes. The ID and
// Result of the Message it returns may alias frame.
func decodeFrame(frame []byte) (Message, error) {
	if m, ok := scanMessage(frame); ok {
		if m.Method == "" && len(m.ID) == 0 {
			return m, errNeither(frame)
		}
		return m, nil
	}
	return DecodeMessage(frame)
}

// Top-level members of a message, as bits for finding repeats.
const (
	memberID = 1 << iota
	memberMethod
	memberResult
	memberError
)

// scanMessage checks that frame is valid JSON and reads its members, or
// reports ok=false when it is not or only json.Unmarshal can be trusted
// to read it.
func scanMessage(frame []byte) (m Message, ok bool) {
	i := jsonscan.SkipSpace(frame, 0)
	if i >= len(frame) || frame[i] != '{' {
		return m, false
	}
	var seen int
	end := walkObject(frame, i, func(key []byte, i int) int {
		end := validValue(frame, i, 1) // inside the top-level object
		if end < 0 {
			return -1
		}
		val := frame[i:end]
		var bit int
		switch string(key) {
		case "id":
			bit = memberID
			m.ID = val
		case "method":
			bit = memberMethod
			switch {
			case string(val) == "null": // leaves the string empty
			case val[0] == '"':
				// Plain ASCII only: json.Unmarshal gives it back as it is.
				if end, ascii := jsonscan.PlainStringEnd(val, 0); end != len(val) || !ascii {
					return -1
				}
				m.Method = string(val[1 : len(val)-1])
			default:
				return -1
			}
		case "result":
			bit = memberResult
			m.Result = val
		case "error":
			bit = memberError
			if string(val) != "null" {
				return -1
			}
		default:
			if !plainKey(key, "id", "method", "result", "error") {
				return -1
			}
			return end
		}
		if seen&bit != 0 {
			return -1
		}
		seen |= bit
		return end
	})
	return m, end >= 0 && jsonscan.SkipSpace(frame, end) == len(frame)
}

// toolResultOK reports whether CheckToolResult surely accepts a message
// with this result and no error: an object with a non-empty "content"
// array of objects (or nulls) whose "type" and "text" are strings (or
// null), and an "isError" that is absent, false or null. false means "ask
// CheckToolResult", not "bad". result must be valid JSON.
func toolResultOK(result []byte) bool {
	i := jsonscan.SkipSpace(result, 0)
	if i >= len(result) || result[i] != '{' {
		return false
	}
	var content, isError int
	end := walkObject(result, i, func(key []byte, v int) int {
		switch string(key) {
		case "content":
			if content++; content > 1 {
				return -1
			}
			return contentEnd(result, v)
		case "isError":
			if isError++; isError > 1 {
				return -1
			}
			if result[v] == 'n' { // null
				return v + 4
			}
			return literal(result, v, "false")
		}
		if !plainKey(key, "content", "isError") {
			return -1
		}
		return jsonscan.ValueEnd(result, v)
	})
	return end >= 0 && content == 1
}

// contentEnd returns the index after the "content" value at b[v] if it is
// a non-empty array of objects (or nulls) with string or null "type" and
// "text", else -1.
func contentEnd(b []byte, v int) int {
	if b[v] != '[' {
		return -1
	}
	n := 0
	end := walkArray(b, v, func(e int) int {
		n++
		switch b[e] {
		case 'n': // null decodes as an empty element
			return e + 4
		case '{':
		default:
			return -1
		}
		var typ, text int
		return walkObject(b, e, func(key []byte, v int) int {
			switch string(key) {
			case "type":
				typ++
			case "text":
				text++
			default:
				if !plainKey(key, "type", "text") {
					return -1
				}
				return jsonscan.ValueEnd(b, v)
			}
			if typ > 1 || text > 1 {
				return -1
			}
			switch b[v] {
			case '"':
				return jsonscan.StringEnd(b, v)
			case 'n': // null
				return v + 4
			}
			return -1
		})
	})
	if n == 0 {
		return -1
	}
	return end
}

// checkToolCall is CheckToolResult for a tools/call response, without
// decoding the result when it is plainly good.
func checkToolCall(m Message) error {
	if m.Error == nil && toolResultOK(m.Result) {
		return nil
	}
	_, err := CheckToolResult(m)
	return err
}

// plainKey reports whether json.Unmarshal surely matches key to none of
// names: it has no escape and does not equal one of them case-insensitively
// (encoding/json matches field names that way).
func plainKey(key []byte, names ...string) bool {
	if bytes.IndexByte(key, '\\') >= 0 {
		return false
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return false
		}
	}
	return true
}

// walkObject walks the object that starts at b[i] ('{'), checking its
// syntax and keys but leaving the values to fn: fn gets each key (without
// the quotes, not unescaped) and the index where its value starts, and
// returns the index after the value, or -1 to stop. walkObject returns
// the index after the object, or -1.
func walkObject(b []byte, i int, fn func(key []byte, v int) int) int {
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1
	}
	for i < len(b) && b[i] == '"' {
		end := validString(b, i)
		if end < 0 {
			return -1
		}
		key := b[i+1 : end-1]
		if i = jsonscan.SkipSpace(b, end); i >= len(b) || b[i] != ':' {
			return -1
		}
		if i = jsonscan.SkipSpace(b, i+1); i >= len(b) {
			return -1
		}
		if i = fn(key, i); i < 0 {
			return -1
		}
		if i = jsonscan.SkipSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case '}':
			return i + 1
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		default:
			return -1
		}
	}
	return -1
}

// walkArray is walkObject for the array that starts at b[i] ('[').
func walkArray(b []byte, i int, fn func(v int) int) int {
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1
	}
	for i < len(b) {
		if i = fn(i); i < 0 {
			return -1
		}
		if i = jsonscan.SkipSpace(b, i); i >= len(b) {
			return -1
		}
		switch b[i] {
		case ']':
			return i + 1
		case ',':
			i = jsonscan.SkipSpace(b, i+1)
		default:
			return -1
		}
	}
	return -1
}

// maxDepth is encoding/json's limit on nested objects and arrays.
const maxDepth = 10000

// validValue returns the index after the valid value that starts at b[i]
// (not whitespace), or -1; depth is the nesting around it.
func validValue(b []byte, i, depth int) int {
	switch b[i] {
	case '{':
		if depth++; depth > maxDepth {
			return -1
		}
		return walkObject(b, i, func(_ []byte, v int) int { return validValue(b, v, depth) })
	case '[':
		if depth++; depth > maxDepth {
			return -1
		}
		return walkArray(b, i, func(v int) int { return validValue(b, v, depth) })
	case '"':
		return validString(b, i)
	case 't':
		return literal(b, i, "true")
	case 'f':
		return literal(b, i, "false")
	case 'n':
		return literal(b, i, "null")
	default:
		return validNumber(b, i)
	}
}

func literal(b []byte, i int, lit string) int {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit)
	}
	return -1
}

// plainByte[c]: c may stand unescaped in a JSON string and ends nothing.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// validString returns the index after the valid string that starts at
// b[i] ('"'), or -1.
func validString(b []byte, i int) int {
	for i++; i < len(b); {
		if plainByte[b[i]] {
			i++
			continue
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
	return -1
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// validNumber returns the index after the valid number that starts at
// b[i], or -1: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte, i int) int {
	if b[i] == '-' {
		if i++; i >= len(b) {
			return -1
		}
	}
	switch {
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return -1
		}
		i = digits(b, i)
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func digits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}
