package jsonscan_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

func TestSkipSpace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i    int
		want int
	}{
		{"", 0, 0},
		{"x", 0, 0},
		{" \t\r\nx", 0, 4},
		{" \t\r\n", 0, 4},
		{"a  b", 1, 3},
		{"\v\f\u00a0x", 0, 0}, // not JSON white space
		{"ab", 2, 2},
	} {
		if got := jsonscan.SkipSpace([]byte(tc.in), tc.i); got != tc.want {
			t.Errorf("SkipSpace(%q, %d) = %d, want %d", tc.in, tc.i, got, tc.want)
		}
	}
}

func TestStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i    int
		want int
	}{
		{`""`, 0, 2},
		{`"abc",1`, 0, 5},
		{`"a\"b"`, 0, 6},
		{`"a\\"b"`, 0, 5},
		{`"\\\""`, 0, 6},
		{`"\u0022"x`, 0, 8},
		{`x"ab"`, 1, 5},
		{`"abc`, 0, -1},
		{`"abc\"`, 0, -1},
		{`"\`, 0, -1},
		{`"`, 0, -1},
		// Contents are not checked: json.Valid's work.
		{"\"a\tb\"", 0, 5},
		{`"\x"`, 0, 4},
	} {
		if got := jsonscan.StringEnd([]byte(tc.in), tc.i); got != tc.want {
			t.Errorf("StringEnd(%q, %d) = %d, want %d", tc.in, tc.i, got, tc.want)
		}
	}
}

func TestPlainStringEnd(t *testing.T) {
	for _, tc := range []struct {
		in    string
		i     int
		end   int
		ascii bool
	}{
		{`""`, 0, 2, true},
		{`"orderId":"A-1024"`, 0, 9, true},
		{`"orderId":"A-1024"`, 10, 18, true},
		{`"/ ' } ] { [ : ,"`, 0, 17, true},
		{"\"\x7f\"", 0, 3, true},
		{`"已发货"`, 0, 11, false},
		{"\"\u2028\u2029\"", 0, 8, false},
		{"\"\xff\"", 0, 3, false}, // plain, but not valid UTF-8: the caller checks
		{`"a\"b"`, 0, -1, false},
		{`"\n"`, 0, -1, false},
		{`"\u00e9"`, 0, -1, false},
		{"\"a\tb\"", 0, -1, false},
		{"\"\x00\"", 0, -1, false},
		{`"abc`, 0, -1, false},
		{`abc"`, 0, -1, false},
		{`"`, 1, -1, false},
		{``, 0, -1, false},
	} {
		end, ascii := jsonscan.PlainStringEnd([]byte(tc.in), tc.i)
		if end != tc.end || ascii != tc.ascii {
			t.Errorf("PlainStringEnd(%q, %d) = %d, %v, want %d, %v", tc.in, tc.i, end, ascii, tc.end, tc.ascii)
		}
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{`""`, "", true},
		{`"tools/call"`, "tools/call", true},
		{`"已发货"`, "已发货", true},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", true},
		{`"\u00e9\u4e1c"`, "é东", true},
		{`"\ud83d\ude00"`, "😀", true},
		{`"\ud800"`, "\ufffd", true},             // a lone surrogate escape
		{`"\ude00\ud83d"`, "\ufffd\ufffd", true}, // surrogates in the wrong order
		{`"\ud83dx"`, "\ufffdx", true},
		{`"\u2028"`, "\u2028", true},
		{"\"\u2028\"", "\u2028", true},
		{"\"\xff\"", "\ufffd", true},
		{"\"a\xc3\"", "a\ufffd", true},
		{"\"\xed\xa0\x80\"", "\ufffd\ufffd\ufffd", true}, // a UTF-8-encoded surrogate
		{`null`, "", false},
		{` "a"`, "", false},
		{`"a" `, "", false},
		{`"a"x`, "", false},
		{`"a"b"`, "", false},
		{`"abc`, "", false},
		{`"`, "", false},
		{``, "", false},
		{`1`, "", false},
		{`"\x"`, "", false},
		{`"\u12"`, "", false},
		{"\"a\tb\"", "", false},
		{`""""`, "", false},
	} {
		got, ok := jsonscan.String([]byte(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("String(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestValueEnd(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i    int
		want int
	}{
		{`"a\"}"}`, 0, 6},
		{`{"a":"}"}, 1`, 0, 9},
		{`[1,[2,{"]":3}]] x`, 0, 15},
		{`{}`, 0, 2},
		{`[ ]`, 0, 3},
		{`123,`, 0, 3},
		{`-1.5e+10}`, 0, 8},
		{`true]`, 0, 4},
		{`false `, 0, 5},
		{`null`, 0, 4},
		{`[1, null]`, 4, 8},
		{`{"a":1`, 0, -1},
		{`"a`, 0, -1},
		{``, 0, -1},
	} {
		if got := jsonscan.ValueEnd([]byte(tc.in), tc.i); got != tc.want {
			t.Errorf("ValueEnd(%q, %d) = %d, want %d", tc.in, tc.i, got, tc.want)
		}
	}
}

func TestForEachMember(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // key=value pairs, one per line
	}{
		{`{}`, ``},
		{` { } `[1:], ``},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, "jsonrpc=\"2.0\"\nid=1\nmethod=\"tools/call\""},
		{"{ \"a\" :\t{\"b\":[1,\"]\"]} ,\r\n\"c\" : null }", "a={\"b\":[1,\"]\"]}\nc=null"},
		{`{"a":1,"a":2}`, "a=1\na=2"},
		{`{"i\u0064":7,"\"":"q"}`, "id=7\n\"=\"q\""},
		{`{"é":true,"":false}`, "é=true\n=false"},
		{"{\"\xff\":1}", "\ufffd=1"},
		{`{"n":-0.5e-3}`, "n=-0.5e-3"},
	} {
		var got []string
		jsonscan.ForEachMember([]byte(tc.in), func(key, val []byte) {
			got = append(got, string(key)+"="+string(val))
		})
		if g := strings.Join(got, "\n"); g != tc.want {
			t.Errorf("ForEachMember(%q):\n%s\nwant\n%s", tc.in, g, tc.want)
		}
	}
}

func TestForEachElement(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // one element per line
	}{
		{`[]`, ``},
		{`[ ]`, ``},
		{`[1]`, `1`},
		{"[ 1 ,\n\"a,b\" , [2,[3]] ,{\"x\":[]},true,false,null ]", "1\n\"a,b\"\n[2,[3]]\n{\"x\":[]}\ntrue\nfalse\nnull"},
		{`[{"jsonrpc":"2.0","id":1},{"jsonrpc":"2.0","id":2}]`, "{\"jsonrpc\":\"2.0\",\"id\":1}\n{\"jsonrpc\":\"2.0\",\"id\":2}"},
	} {
		var got []string
		jsonscan.ForEachElement([]byte(tc.in), func(val []byte) { got = append(got, string(val)) })
		if g := strings.Join(got, "\n"); g != tc.want {
			t.Errorf("ForEachElement(%q):\n%s\nwant\n%s", tc.in, g, tc.want)
		}
	}
}

// TestNoAllocs checks that the scanners allocate nothing on the common
// shapes: that is what they are for.
func TestNoAllocs(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`)
	arr := []byte(`[1,"a",{}]`)
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		jsonscan.ForEachMember(msg, func(key, val []byte) {
			n += len(key)
			if val[0] == '{' {
				jsonscan.ForEachMember(val, func(key, val []byte) { n += len(key) })
			}
		})
		jsonscan.ForEachElement(arr, func(val []byte) { n += len(val) })
		if end, _ := jsonscan.PlainStringEnd(msg, 1); end < 0 {
			t.Fatal("not plain")
		}
		n += jsonscan.StringEnd(msg, 1) + jsonscan.ValueEnd(msg, 0) + jsonscan.SkipSpace(msg, 0)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

// seeds are inputs on and around the edges of JSON's grammar: every
// escape, surrogates right and wrong, U+2028, invalid UTF-8, white space,
// numbers, nesting, repeated and escaped keys, and the usual messages.
var seeds = []string{
	``, ` `, "\t\r\n ", `""`, `"a"`, `"\"\\\/\b\f\n\r\t"`, `"\u0041\u00e9\u4e1c\uFFFF"`,
	`"\ud83d\ude00"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ude00\ud83d"`, `"\ud83dx"`,
	`"\u2028\u2029"`, "\"\u2028\u2029\"", "\"\x7f\"", "\"\xff\xfe\"", "\"a\xc3\"", "\"\xed\xa0\x80\"",
	"\"\xf4\x90\x80\x80\"", "\"\xc0\xaf\"", `"已发货"`, "\"a\tb\"", "\"\x00\"", `"\x"`, `"\u12"`, `"\u12g4"`,
	`"\`, `"`, `"abc`, `"a"b"`, `"a" `, ` "a"`, `"a"x`,
	`0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-7`, `1e`, `-1.5e-10`, `+1`, `1x`,
	`99999999999999999999`, `true`, `tru`, `false`, `null`, `nul`, `nullx`,
	`[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,"2",[3],{"4":5},true,null]`, `[[[[[]]]]]`,
	`{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":1,"a":2}`,
	`{"a":"1","b":"x","a":"2"}`, `{"A":1,"a":2}`, `{"i\u0064":1,"id":2}`, `{"\"":1,"\\":2}`,
	"{\"\xff\":1,\"\xfe\":2}", `{"":""}`, `{"é":"東京 😀"}`,
	" {\n\t\"a\" \r: \"b\" ,\n \"c\":[ 1 , { \"d\" : null } ] }\r\n",
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`,
	`{"jsonrpc":"2.0","id":"x\"y","result":{"content":[{"type":"text","text":"{\"a\":\"\\\"\"}"}],"isError":false}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
	`{"a":[1,2,{"b":"]}"}],"c":{"d":{"e":[]}}}`, `{"a":1}}`, `{"a":1} {}`, `{"a":"b"`, `[1`, `[1]]`,
	`[` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 101), `{"a":` + strings.Repeat(`{"a":`, 50) + `1` + strings.Repeat(`}`, 51),
}

func TestSeeds(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s))
	}
}

// FuzzScan holds every function to encoding/json on arbitrary input: on
// text json.Valid accepts, value boundaries, object members (keys decoded,
// in order, the last of a repeated key winning) and array elements agree
// with json.Unmarshal and json.Decoder, and so do strings; on any text the
// functions that take any input claim no string that encoding/json would
// not read the same way, and the others neither panic nor run off the
// end.
func FuzzScan(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		check(t, b)
	})
}

// check runs every test of FuzzScan on b.
func check(t *testing.T, b []byte) {
	t.Helper()
	if got, want := jsonscan.SkipSpace(b, 0), len(b)-len(bytes.TrimLeft(b, " \t\r\n")); got != want {
		t.Fatalf("SkipSpace(%q, 0) = %d, want %d", b, got, want)
	}
	checkString(t, b)
	starts := 0
	for i, c := range b {
		if c == '"' {
			checkStringAt(t, b, i)
		}
		// The trusting functions on whatever b holds: no panic, no
		// endless loop, nothing out of range.
		if starts++; starts > 256 {
			continue
		}
		if end := jsonscan.ValueEnd(b, i); end != -1 && (end < i || end > len(b)) {
			t.Fatalf("ValueEnd(%q, %d) = %d, out of range", b, i, end)
		}
		switch c {
		case '{':
			jsonscan.ForEachMember(b[i:], func(key, val []byte) {})
		case '[':
			jsonscan.ForEachElement(b[i:], func(val []byte) {})
		}
	}
	if !json.Valid(b) {
		return
	}
	i := jsonscan.SkipSpace(b, 0)
	end := jsonscan.ValueEnd(b, i)
	if end < 0 || jsonscan.SkipSpace(b, end) != len(b) {
		t.Fatalf("ValueEnd(%q, %d) = %d, want the end of the value", b, i, end)
	}
	checkValue(t, b[i:end])
}

// checkStringAt checks StringEnd and PlainStringEnd at b[i], a quote,
// against json.Decoder reading a string token from there.
func checkStringAt(t *testing.T, b []byte, i int) {
	t.Helper()
	wantEnd := -1 // where encoding/json ends a string at b[i], if it reads one
	var want string
	dec := json.NewDecoder(bytes.NewReader(b[i:]))
	if tok, err := dec.Token(); err == nil {
		want = tok.(string)
		wantEnd = i + int(dec.InputOffset())
	}
	end := jsonscan.StringEnd(b, i)
	if wantEnd >= 0 && end != wantEnd {
		t.Fatalf("StringEnd(%q, %d) = %d, encoding/json ends the string at %d", b, i, end, wantEnd)
	}
	pend, ascii := jsonscan.PlainStringEnd(b, i)
	if pend < 0 {
		if ascii {
			t.Fatalf("PlainStringEnd(%q, %d) = -1, true", b, i)
		}
		if wantEnd >= 0 && bytes.IndexByte(b[i+1:wantEnd-1], '\\') < 0 {
			t.Fatalf("PlainStringEnd(%q, %d) = -1 for a string without escapes", b, i)
		}
	} else {
		body := b[i+1 : pend-1]
		switch {
		case pend != wantEnd:
			t.Fatalf("PlainStringEnd(%q, %d) = %d, encoding/json ends a string at %d", b, i, pend, wantEnd)
		case bytes.IndexByte(body, '\\') >= 0:
			t.Fatalf("PlainStringEnd(%q, %d) = %d, a string with an escape", b, i, pend)
		case ascii != isASCII(body):
			t.Fatalf("PlainStringEnd(%q, %d) says ascii = %v", b, i, ascii)
		case utf8.Valid(body) && string(body) != want:
			t.Fatalf("PlainStringEnd(%q, %d): contents %q, encoding/json decodes %q", b, i, body, want)
		}
	}
	if end >= 0 {
		checkString(t, b[i:end])
	}
}

// checkString checks String(v) against json.Unmarshal.
func checkString(t *testing.T, v []byte) {
	t.Helper()
	var want string
	wantOK := len(v) > 0 && v[0] == '"' && len(trimSpace(v)) == len(v) && json.Unmarshal(v, &want) == nil
	got, ok := jsonscan.String(v)
	if ok != wantOK || got != want {
		t.Fatalf("String(%q) = %q, %v; json.Unmarshal: %q, %v", v, got, ok, want, wantOK)
	}
}

// member is one member of an object: its decoded key and raw value.
type member struct{ key, val string }

// checkValue checks the scanners on v, one valid JSON value without white
// space around it, and on every value inside it.
func checkValue(t *testing.T, v []byte) {
	t.Helper()
	if end := jsonscan.ValueEnd(v, 0); end != len(v) {
		t.Fatalf("ValueEnd(%q, 0) = %d, want %d", v, end, len(v))
	}
	switch v[0] {
	case '"':
		if end := jsonscan.StringEnd(v, 0); end != len(v) {
			t.Fatalf("StringEnd(%q, 0) = %d, want %d", v, end, len(v))
		}
		checkString(t, v)
	case '{':
		var got []member
		jsonscan.ForEachMember(v, func(key, val []byte) {
			got = append(got, member{string(key), string(val)})
		})
		// In order, repeats included, as json.Decoder reads them.
		var want []member
		dec := json.NewDecoder(bytes.NewReader(v))
		_, err := dec.Token()
		must(t, v, err)
		for dec.More() {
			tok, err := dec.Token()
			must(t, v, err)
			var raw json.RawMessage
			must(t, v, dec.Decode(&raw))
			want = append(want, member{tok.(string), string(trimSpace(raw))})
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ForEachMember(%q):\n%q\njson.Decoder:\n%q", v, got, want)
		}
		// The last of a repeated key wins, as in json.Unmarshal.
		last := map[string]string{}
		for _, m := range got {
			last[m.key] = m.val
		}
		var um map[string]json.RawMessage
		must(t, v, json.Unmarshal(v, &um))
		if len(um) != len(last) {
			t.Fatalf("ForEachMember(%q): %d distinct keys, json.Unmarshal %d", v, len(last), len(um))
		}
		for k, raw := range um {
			if val, ok := last[k]; !ok || val != string(trimSpace(raw)) {
				t.Fatalf("ForEachMember(%q): last %q is %q, json.Unmarshal has %s", v, k, val, raw)
			}
		}
		for _, m := range got {
			checkValue(t, []byte(m.val))
		}
	case '[':
		var got []string
		jsonscan.ForEachElement(v, func(val []byte) { got = append(got, string(val)) })
		var raws []json.RawMessage
		must(t, v, json.Unmarshal(v, &raws))
		want := make([]string, len(raws))
		for i, r := range raws {
			want[i] = string(trimSpace(r))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("ForEachElement(%q):\n%q\njson.Unmarshal:\n%q", v, got, want)
		}
		for _, e := range got {
			checkValue(t, []byte(e))
		}
	}
}

// must fails the test if encoding/json could not read v.
func must(t *testing.T, v []byte, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("encoding/json on valid %q: %v", v, err)
	}
}

func trimSpace(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
