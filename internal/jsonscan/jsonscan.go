// Package jsonscan reads JSON text where it lies: it finds where strings
// and values end, walks the members of an object and the elements of an
// array, and reads strings, without decoding the text into Go values.
//
// It exists for the hot paths that need only a few fields of a message or
// the strings of a small object: the stdio server reading the envelope of
// every request, DecodeArgs reading a tool's flat arguments, the PII masker
// walking a tool's output and the benchmark harness checking every frame a
// server writes. They run for every call, and decoding with encoding/json
// would spend its reflection and an allocation or more per token to get a
// few fields that can be found in place. The four share this one
// implementation, held to encoding/json's answers by one fuzz target, so
// that they cannot disagree about where a value ends or what a key or a
// string says.
//
// Each function says what input it takes. SkipSpace, StringEnd,
// PlainStringEnd and String take any bytes: the first two say exactly what
// they find, and the other two report -1 or false rather than claim a
// string that encoding/json would not read the same way. ValueEnd,
// ForEachMember and ForEachElement trust their input to be text that
// json.Valid accepted and only find boundaries in it; given anything else
// they neither panic nor loop forever, but what they report is
// meaningless. A caller that cannot trust its input runs json.Valid first
// or, like the benchmark harness, validates as it walks.
package jsonscan

import (
	"encoding/json"
	"unicode/utf8"
)

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space (space, tab, line feed or carriage return), or len(b)
// if there is none. i must not be greater than len(b). It takes any input.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// StringEnd looks for a quote from b[i+1] on, stepping over the byte after
// each backslash, and returns the index just past it, or -1 if there is
// none. When b[i] is the opening quote of a string in text that json.Valid
// accepted, that is the end of the string. It does not check what lies
// between the quotes (that is json.Valid's work, or PlainStringEnd's for
// one string), so on other text it may end a string that encoding/json
// would reject. It takes any input.
func StringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// PlainStringEnd returns the index just past the JSON string that starts
// at b[i] if it has no escape and no control character (below U+0020),
// and whether its contents are all ASCII; or -1 and false if b[i:] does
// not start with such a string (which does not say whether it starts with
// a valid one). A string it ends is one that json.Valid accepts. Its
// contents b[i+1:end-1] are exactly what json.Unmarshal decodes it to,
// usable without decoding or allocating, when they are valid UTF-8: always
// when ascii is true, otherwise when utf8.Valid says so (a caller reading
// many strings may check the whole text once instead). PlainStringEnd
// leaves that check to the caller so that it stays small enough to be
// inlined. It takes any input.
func PlainStringEnd(b []byte, i int) (end int, ascii bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	ascii = true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, ascii
		case c == '\\' || c < 0x20:
			return -1, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return -1, false
}

// String returns the value of v, which must be one JSON string with
// nothing around it, exactly as json.Unmarshal decodes it into a Go string:
// escapes decoded, an invalid surrogate escape or byte that is not valid
// UTF-8 replaced by U+FFFD. For anything else (null, white space around
// the string, another value, invalid text) it returns false. A plain
// string (see PlainStringEnd) is copied without decoding. It takes any
// input.
func String(v []byte) (string, bool) {
	if end, ascii := PlainStringEnd(v, 0); end == len(v) && (ascii || utf8.Valid(v[1:end-1])) {
		return string(v[1 : end-1]), true
	}
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// ValueEnd returns the index just past the JSON value that starts at b[i],
// which must be the first byte of a value (not white space) in text that
// json.Valid accepted. A string runs to its closing quote (see
// StringEnd), an object or an array to its matching bracket, and a
// number, true, false or null to the next delimiter. On other text it
// returns -1 or an index at or after i.
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = StringEnd(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// ForEachMember calls fn with the key and the value of each member of the
// object that starts at obj[0], in order, in text that json.Valid
// accepted. The key is decoded as json.Unmarshal decodes an object's key;
// it is a sub-slice of obj when the key is plain (see PlainStringEnd) and
// a new slice otherwise. The value is the raw text of the member's value,
// a sub-slice of obj without white space around it. A key given twice is
// reported each time, so keeping the last one gives encoding/json's
// answer. fn must not modify key or val.
func ForEachMember(obj []byte, fn func(key, val []byte)) {
	i := SkipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		var key []byte
		end, ascii := PlainStringEnd(obj, i)
		if end >= 0 && ascii {
			key = obj[i+1 : end-1]
		} else if key, end = decodeKey(obj, i); end < 0 {
			return
		}
		if i = SkipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return
		}
		i = SkipSpace(obj, i+1)
		end = ValueEnd(obj, i)
		if end <= i {
			return
		}
		fn(key, obj[i:end])
		if i = SkipSpace(obj, end); i >= len(obj) || obj[i] != ',' {
			return
		}
		i = SkipSpace(obj, i+1)
	}
}

// decodeKey returns the key that starts at b[i], decoded, and the index
// past it, or -1 if b[i:] does not start with a string. ForEachMember
// takes plain ASCII keys, nearly all keys, without calling it.
func decodeKey(b []byte, i int) (key []byte, end int) {
	end, ascii := PlainStringEnd(b, i)
	if end >= 0 && (ascii || utf8.Valid(b[i+1:end-1])) {
		return b[i+1 : end-1], end
	}
	if end = StringEnd(b, i); end < 0 {
		return nil, -1
	}
	s, _ := String(b[i:end]) // a valid string always decodes
	return []byte(s), end
}

// ForEachElement calls fn with the raw text of each element of the array
// that starts at arr[0], in order, in text that json.Valid accepted. Each
// element is a sub-slice of arr without white space around it. fn must
// not modify it.
func ForEachElement(arr []byte, fn func(val []byte)) {
	i := SkipSpace(arr, 1)
	for i < len(arr) && arr[i] != ']' {
		end := ValueEnd(arr, i)
		if end <= i {
			return
		}
		fn(arr[i:end])
		if i = SkipSpace(arr, end); i >= len(arr) || arr[i] != ',' {
			return
		}
		i = SkipSpace(arr, i+1)
	}
}
