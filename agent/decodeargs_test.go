package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeArgsRef is DecodeArgs as it was before the fast path: json.Unmarshal
// into an any. DecodeArgs must return exactly what it returns.
func decodeArgsRef(args json.RawMessage) (map[string]any, error) {
	if isAbsent(args) {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &json.UnsupportedValueError{Str: "not an object"}
	}
	return m, nil
}

// checkDecodeArgs compares DecodeArgs with decodeArgsRef on in: the same
// map (nil on error) and an error on the same inputs.
func checkDecodeArgs(t *testing.T, in string) {
	t.Helper()
	got, gotErr := DecodeArgs(json.RawMessage(in))
	want, wantErr := decodeArgsRef(json.RawMessage(in))
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("DecodeArgs(%q) error = %v, json.Unmarshal error = %v", in, gotErr, wantErr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("DecodeArgs(%q) differs from json.Unmarshal (-want +got):\n%s", in, diff)
	}
	if gotErr == nil && got == nil {
		t.Fatalf("DecodeArgs(%q) = nil map without an error", in)
	}
}

// TestDecodeArgsMatchesUnmarshal runs inputs on and around the edges of the
// fast path. fast says whether the fast path must take the input itself;
// every input must give what json.Unmarshal gives either way.
func TestDecodeArgsMatchesUnmarshal(t *testing.T) {
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		in   string
		fast bool
	}{
		// Taken by the fast path.
		{`{"orderId":"A-1024"}`, true},
		{`{}`, true},
		{` { } `, true},
		{"\t{\r\n}\n", true},
		{`{"":""}`, true},
		{`{"a":"b","c":"d","e":"f"}`, true},
		{" {\n\t\"a\" \r: \"b\" ,\n \"c\":\"d\"\t}\r\n", true},
		{`{"a":"1","a":"2"}`, true}, // the last duplicate wins
		{`{"a":"1","b":"x","a":"2"}`, true},
		{`{"A":"1","a":"2"}`, true}, // keys are case-sensitive in a map
		{`{"name":"José 東京 😀 ¿"}`, true},
		{`{"é":"\u00e9 written plainly: é"}`, false}, // has an escape
		{"{\"k\":\"\xef\xbf\xbd\"}", true},           // U+FFFD itself is valid UTF-8
		{"{\"k\":\"\u2028\u2029\x7f\"}", true},       // line/paragraph separators and DEL are allowed raw
		{`{"k":"/ ' } ] { [ : ,"}`, true},
		{`{"k":"` + long + `"}`, true},
		{`{"k":"null","t":"true","n":"1"}`, true},

		// Left to json.Unmarshal, which decodes them.
		{`{"a":1}`, false},
		{`{"a":-1.5e3}`, false},
		{`{"a":true}`, false},
		{`{"a":false}`, false},
		{`{"a":null}`, false},
		{`{"a":{}}`, false},
		{`{"a":{"b":"c"}}`, false},
		{`{"a":[]}`, false},
		{`{"a":["b"]}`, false},
		{`{"a":"b","n":2}`, false},
		{`{"a":"b\"c"}`, false},
		{`{"a":"b\\c"}`, false},
		{`{"a":"\/"}`, false},
		{`{"a":"\n"}`, false},
		{`{"a\u0062":"c"}`, false},
		{`{"a":"\ud83d\ude00"}`, false},
		{`{"a":"\ud800"}`, false}, // lone surrogate escape: U+FFFD
		{`{"a":"1","a":2}`, false},
		{`{"a":2,"a":"1"}`, false},

		// Absent: an empty map.
		{``, false},
		{` `, false},
		{"\t\r\n ", false},
		{`null`, false},
		{` null `, false},

		// Invalid UTF-8: json.Unmarshal replaces it with U+FFFD.
		{"{\"k\":\"\xff\"}", false},
		{"{\"\xff\":\"v\"}", false},
		{"{\"k\":\"a\xc3\"}", false},        // truncated sequence
		{"{\"k\":\"\xc0\xaf\"}", false},     // overlong
		{"{\"k\":\"\xed\xa0\x80\"}", false}, // UTF-8-encoded surrogate
		{"{\"k\":\"\xf4\x90\x80\x80\"}", false},
		{"{\"k\":\"é\",\"j\":\"\x80\"}", false},

		// Errors, whichever path sees them.
		{`{"a":"b",}`, false},
		{`{"a" "b"}`, false},
		{`{"a":"b"}x`, false},
		{`{"a":"b"}}`, false},
		{`{"a":"b"} {}`, false},
		{`{"a":"b"`, false},
		{`{"a":"b`, false},
		{`{"a":`, false},
		{`{"a"`, false},
		{`{"a`, false},
		{`{`, false},
		{`}`, false},
		{`{,}`, false},
		{`{"a":"b",,"c":"d"}`, false},
		{`{"a":"b" "c":"d"}`, false},
		{`{"a"::"b"}`, false},
		{`{"a":"b":"c"}`, false},
		{`{a:"b"}`, false},
		{`{'a':'b'}`, false},
		{`{"a":'b'}`, false},
		{`{"a":"b";}`, false},
		{`{"a":"b"},`, false},
		{"{\"a\":\"b\tc\"}", false}, // raw control characters are invalid JSON
		{"{\"a\":\"b\nc\"}", false},
		{"{\"a\":\"\x00\"}", false},
		{"{\"a\x1f\":\"b\"}", false},
		{"\v{}", false},           // not JSON whitespace
		{"\f{}", false},           // not JSON whitespace
		{"{\u00a0}", false},       // not JSON whitespace
		{"\xef\xbb\xbf{}", false}, // byte order mark
		{"{}\x00", false},
		{`{"a":"\x"}`, false},
		{`{"a":"\u12"}`, false},
		{`nul`, false},
		{`nulll`, false},
		{`null x`, false},
		{`[]`, false},
		{`["a"]`, false},
		{`"a"`, false},
		{`1`, false},
		{`true`, false},
		{`{}{}`, false},
		{`{} x`, false},
		{"{\"a\":\"b\"}\xff", false},
	} {
		if _, ok := decodeFlatStrings([]byte(tc.in)); ok != tc.fast {
			t.Errorf("decodeFlatStrings(%q) ok = %v, want %v", tc.in, ok, tc.fast)
		}
		checkDecodeArgs(t, tc.in)
	}
}

// TestDecodeArgsErrorMessages checks that errors still come from the
// json.Unmarshal path, word for word.
func TestDecodeArgsErrorMessages(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"b",}`: "arguments are not valid JSON: invalid character '}' looking for beginning of object key string",
		`{"a":"b"}x`: "arguments are not valid JSON: invalid character 'x' after top-level value",
		`["a"]`:      "arguments must be a JSON object, got an array",
		`"a"`:        "arguments must be a JSON object, got a string",
	} {
		_, err := DecodeArgs(json.RawMessage(in))
		if err == nil || err.Error() != want {
			t.Errorf("DecodeArgs(%q) error = %v, want %q", in, err, want)
		}
	}
}

// TestDecodeArgsFreshMap checks that each call returns its own map, as
// json.Unmarshal does: callers may change it.
func TestDecodeArgsFreshMap(t *testing.T) {
	for _, in := range []string{`{}`, `{"a":"b"}`} {
		m1, _ := DecodeArgs(json.RawMessage(in))
		m1["x"] = "changed"
		m2, _ := DecodeArgs(json.RawMessage(in))
		if _, ok := m2["x"]; ok {
			t.Fatalf("DecodeArgs(%q) returned a shared map", in)
		}
	}
}

func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"orderId":"A-1024"}`, `{}`, ` { "a" : "b" , "c" : "d" } `, `{"a":"1","a":"2"}`,
		`{"a":"b",}`, `{"a" "b"}`, `{"a":"b"}x`, `{"a":1}`, `{"a":"\n"}`, `null`, ``, `[]`,
		"{\"k\":\"\xff\"}", "{\"k\":\"é\"}", "{\"a\":\"b\tc\"}", `{"a":{"b":"c"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeArgs(t, string(b))
		checkAcceptsRaw(t, b)
	})
}

// fuzzQuick is a flat string schema of the shape local tools have, for
// checkAcceptsRaw.
var fuzzQuick = compileQuick(json.RawMessage(`{"type":"object","properties":{` +
	`"a":{"type":"string","minLength":1,"maxLength":3},` +
	`"orderId":{"type":"string","pattern":"^[A-Z]{1,4}-[0-9]{4,12}$"},` +
	`"k":{"type":"string"}},"required":["a"],"additionalProperties":false}`))

// checkAcceptsRaw requires CheckArgs' in-place check to accept only
// arguments that decode and that the decoded check accepts, and to accept
// every such plain object without a repeated key (so it is not a check
// that never says yes).
func checkAcceptsRaw(t *testing.T, b []byte) {
	t.Helper()
	got := fuzzQuick.acceptsRaw(b)
	m, err := DecodeArgs(json.RawMessage(b))
	want := err == nil && fuzzQuick.accepts(m)
	if got && !want {
		t.Fatalf("acceptsRaw(%q) = true; decoded %v, %v, accepts false", b, m, err)
	}
	if !got && want {
		keys := 0
		if scanFlatStrings(b, func(_, _, _, _ int) bool { keys++; return true }) && keys == len(m) {
			t.Fatalf("acceptsRaw(%q) = false; the decoded check accepts %v", b, m)
		}
	}
}

// TestAcceptsRaw runs checkAcceptsRaw on the seeds of both kinds.
func TestAcceptsRaw(t *testing.T) {
	if fuzzQuick == nil {
		t.Fatal("the test schema does not compile to a quick check")
	}
	for _, s := range []string{
		`{"a":"x"}`, ` { "a" : "xyz" , "orderId" : "A-1024" } `, `{"a":"x","k":"anything é"}`,
		`{"a":""}`, `{"a":"wxyz"}`, `{"a":"x","orderId":"a-1"}`, `{"k":"x"}`, `{"a":"x","z":"1"}`,
		`{"a":"x","a":"toolong"}`, `{"a":"toolong","a":"x"}`, `{"a":"\u0078"}`, `{"a":1}`, "{\"a\":\"\xff\"}",
		`{}`, ``, `null`, `[]`, `{"a":"x"} x`,
	} {
		checkAcceptsRaw(t, []byte(s))
	}
	for s, want := range map[string]bool{`{"a":"x"}`: true, `{"a":"é","orderId":"AB-0001"}`: true, `{"a":"x","a":"toolong"}`: false, `{"a":"wxyz"}`: false} {
		if got := fuzzQuick.acceptsRaw([]byte(s)); got != want {
			t.Errorf("acceptsRaw(%s) = %v, want %v", s, got, want)
		}
	}
}
