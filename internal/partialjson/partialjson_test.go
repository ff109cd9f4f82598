package partialjson

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRepair(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Not yet: nothing complete.
		{``, ``},
		{`   `, ``},
		{`-`, ``},
		{`12.`, ``},
		{`1e+`, ``},
		{`tr`, ``},
		{`nul`, ``},
		// Whole texts come back as they were.
		{`{}`, `{}`},
		{`{"a":1} `, `{"a":1}`},
		{` [1, 2]`, ` [1, 2]`},
		{`"x"`, `"x"`},
		{`12`, `12`},
		{`-0.5e-3`, `-0.5e-3`},
		{`true`, `true`},
		// Containers are closed.
		{`{`, `{}`},
		{`[`, `[]`},
		{`[[`, `[[]]`},
		{`{"a":[1,{"b":null`, `{"a":[1,{"b":null}]}`},
		{`[1,2`, `[1,2]`},
		{`[1,2,`, `[1,2]`},
		{`[1,2 `, `[1,2]`},
		{`{"a":1,`, `{"a":1}`},
		{`{"a":[1],"b":{"c":2}`, `{"a":[1],"b":{"c":2}}`},
		// Strings are closed; escapes and characters cut in two are left out.
		{`{"city":"Par`, `{"city":"Par"}`},
		{`{"city":"`, `{"city":""}`},
		{`["a\`, `["a"]`},
		{`["a\u00`, `["a"]`},
		{`["a\u00e9`, `["a\u00e9"]`},
		{`["a\n`, `["a\n"]`},
		{"[\"北京", "[\"北京\"]"},
		{"[\"北京"[:6], "[\"北\"]"},
		{"[\"北京"[:7], "[\"北\"]"},
		{`"abc`, `"abc"`},
		// A dangling key, a key without its value, an unfinished number or
		// literal: dropped.
		{`{"a`, `{}`},
		{`{"a"`, `{}`},
		{`{"a":`, `{}`},
		{`{"a": `, `{}`},
		{`{"a":1,"b`, `{"a":1}`},
		{`{"a":1,"b":`, `{"a":1}`},
		{`{"a":1,"b":-`, `{"a":1}`},
		{`{"a":1,"b":2.`, `{"a":1}`},
		{`{"a":1,"b":2.5`, `{"a":1,"b":2.5}`},
		{`{"a":1,"b":tru`, `{"a":1}`},
		{`{"a":1,"b":[tru`, `{"a":1,"b":[]}`},
		{`{"a":{"b":`, `{"a":{}}`},
		// Not the beginning of any JSON text.
		{`x`, ``},
		{`{a`, ``},
		{`{"a" 1`, ``},
		{`[1 2`, ``},
		{`[,`, ``},
		{`{,`, ``},
		{`{"a":1}}`, ``},
		{`{"a":1} x`, ``},
		{`[01`, ``},
		{`[1]]`, ``},
		{`[1}`, ``},
		{`{"a":1]`, ``},
		{`[truex`, ``},
		{`["a\x`, ``},
		{`["a\u12g4`, ``},
		{"[\"a\nb", ``},
		{`[1.e5`, ``},
		{`[+1`, ``},
	} {
		got := Repair([]byte(c.in))
		if string(got) != c.want || (c.want == "") != (got == nil) {
			t.Errorf("Repair(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRepairEveryPrefix: every prefix of real tool arguments repairs to
// valid JSON, an object once the opening brace is in, which holds no more
// than the prefix says.
func TestRepairEveryPrefix(t *testing.T) {
	doc := `{"order":"A-1024","items":[{"sku":"茶叶","qty":2,"price":19.5},{"sku":"mug","qty":1e0,"gift":true}],` +
		`"note":"leave at the door \"back\" \u00e9 \\ /","ship":{"city":"上海","zip":null,"express":false}, "tags":[]}`
	if !json.Valid([]byte(doc)) {
		t.Fatal("the test's document is not JSON")
	}
	var last string
	for i := 0; i <= len(doc); i++ {
		got := Repair([]byte(doc[:i]))
		if i == 0 {
			if got != nil {
				t.Fatalf("Repair(\"\") = %q", got)
			}
			continue
		}
		if !json.Valid(got) || !utf8.Valid(got) {
			t.Fatalf("Repair(%q) = %q: not valid JSON", doc[:i], got)
		}
		var v map[string]any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Fatalf("Repair(%q) = %q: not an object: %v", doc[:i], got, err)
		}
		last = string(got)
	}
	if last != doc {
		t.Errorf("the whole document repaired to %q", last)
	}
}

// TestRepairBounds: deep nesting and huge input are refused, not scanned
// without end.
func TestRepairBounds(t *testing.T) {
	if got := Repair([]byte(strings.Repeat("[", MaxDepth))); len(got) != 2*MaxDepth {
		t.Errorf("%d open arrays (the limit) repaired to %d bytes", MaxDepth, len(got))
	}
	if got := Repair([]byte(strings.Repeat("[", MaxDepth+1))); got != nil {
		t.Errorf("%d open arrays repaired to %d bytes, want nil", MaxDepth+1, len(got))
	}
	huge := append([]byte(`["`), bytes.Repeat([]byte("a"), MaxInput)...)
	if got := Repair(huge); got != nil {
		t.Errorf("input over MaxInput repaired to %d bytes, want nil", len(got))
	}
	if got := Repair(huge[:MaxInput]); len(got) != MaxInput+2 {
		t.Errorf("input of MaxInput bytes repaired to %d bytes", len(got))
	}
}

// TestRepairLeavesInputAlone: the prefix is not written to, even when it
// has room past its end.
func TestRepairLeavesInputAlone(t *testing.T) {
	buf := []byte(`{"a":"b` + "XXXX")
	in := buf[:7]
	got := Repair(in)
	if string(got) != `{"a":"b"}` || string(buf) != `{"a":"b`+"XXXX" {
		t.Errorf("Repair = %q, buffer now %q", got, buf)
	}
}

func FuzzRepair(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"c\u00e9`, `[1,2.5e-3,true,null,"x"]`, `{"城市":"北京","n":-0}`, `{"a":`, `"\`, `[01]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		orig := bytes.Clone(in)
		got := Repair(in)
		if !bytes.Equal(in, orig) {
			t.Fatalf("Repair changed its input")
		}
		if got != nil && !json.Valid(got) {
			t.Fatalf("Repair(%q) = %q: not valid JSON", in, got)
		}
		if json.Valid(in) && bytes.Count(in, []byte("["))+bytes.Count(in, []byte("{")) <= MaxDepth {
			if want := bytes.TrimRight(in, " \t\r\n"); !bytes.Equal(got, want) {
				t.Fatalf("Repair(%q) = %q, want the text itself", in, got)
			}
		}
		// Every prefix of a valid text repairs to valid JSON or nil.
		if json.Valid(in) && len(in) < 512 {
			for i := range in {
				if p := Repair(in[:i]); p != nil && !json.Valid(p) {
					t.Fatalf("Repair(%q) = %q: not valid JSON", in[:i], p)
				}
			}
		}
	})
}
