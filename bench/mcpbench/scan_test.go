package mcpbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

// jsonSeeds are inputs for validJSON: valid and invalid ones at the edges
// of the grammar.
var jsonSeeds = []string{
	``, ` `, `0`, `-0`, `-`, `01`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e-`, `1e`, `-1.5e-10`, `1x`, `+1`,
	`true`, `tru`, `truex`, `false`, `null`, `nul`, `nullnull`, `"`, `""`, `"a`, `"\"`, `"\\"`, `"\u00e9"`, `"\u00g9"`,
	`"\u12"`, `"\x"`, `"\/"`, "\"\t\"", "\"\x7f\"", "\"\xff\xfe\"", "\"é\"", `[]`, `[ ]`, `[1,]`, `[,1]`, `[1 2]`, `[1,2]`,
	`{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 "b":2}`, `{a:1}`, `{"a":1}`, `{"a" : [ {"b" : null} ] }`,
	" \r\n\t{}\n", `{} {}`, `{}x`, `[` + strings.Repeat(`[`, 9999) + strings.Repeat(`]`, 10000),
	`[` + strings.Repeat(`[`, 10000) + strings.Repeat(`]`, 10001), "\x00", "{}\x00",
}

// validJSON is json.Valid done by validValue, which scanMessage uses.
func validJSON(b []byte) bool {
	i := jsonscan.SkipSpace(b, 0)
	if i == len(b) {
		return false
	}
	i = validValue(b, i, 0)
	return i >= 0 && jsonscan.SkipSpace(b, i) == len(b)
}

func TestValidJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.60q) = %v, json.Valid says %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// frameSeeds are frames a server might write, and frames that only
// json.Unmarshal reads right: escaped or case-folded keys, repeated
// members, nulls, errors, results that fail CheckToolResult.
var frameSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`,
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"a\":\"\\\"\"}"}],"structuredContent":{"a":"é"}}}`,
	` { "id" : 7 , "result" : { "content" : [ { "type" : "text" } , null ] , "isError" : false } } `,
	`{"id":1,"result":{"content":[{"type":"text","text":"no"}],"isError":true}}`,
	`{"id":1,"result":{"content":[],"isError":null}}`,
	`{"id":1,"result":{"content":null}}`,
	`{"id":1,"result":{"content":[1]}}`,
	`{"id":1,"result":{"content":[{"type":5}]}}`,
	`{"id":1,"result":{"content":[{"text":null,"type":null}]}}`,
	`{"id":1,"result":{"content":[{"TYPE":"x"}]}}`,
	`{"id":1,"result":{"content":[{"type":"a"}],"content":[]}}`,
	`{"id":1,"result":{"Content":[{"type":"a"}]}}`,
	`{"id":1,"result":{"content":[{"type":"a"}],"isError":"yes"}}`,
	`{"id":1,"result":{"content":[{"type":"a"}],"iserror":true}}`,
	`{"id":1,"result":{"content":[{"type":"a"}],"is\u0045rror":true}}`,
	`{"id":1,"result":{"conten\u0074":[{"type":"a"}]}}`,
	`{"id":1,"result":[1]}`, `{"id":1,"result":"x"}`, `{"id":1,"result":null}`, `{"id":1}`,
	`{"id":1,"error":{"code":-32602,"message":"bad"}}`,
	`{"id":1,"error":{"code":1.5,"message":"bad"}}`,
	`{"id":1,"error":null,"result":{"content":[{"type":"a"}]}}`,
	`{"id":1,"error":"x"}`,
	`{"id":null,"error":{"code":-32700,"message":"parse error"}}`,
	`{"ID":1,"result":{}}`, `{"i\u0064":1,"result":{}}`, `{"id":1,"id":2,"result":{}}`,
	`{"id":"s1","method":"roots/list"}`, `{"id":"s1","method":null}`, `{"id":"s1","method":"a","method":null}`,
	`{"id":"s1","method":"ro\u006fts/list"}`, `{"id":"s1","method":"é"}`, `{"id":"s1","method":5}`,
	`{"method":"notifications/message","params":{"level":"info"}}`, `{"Method":"x"}`, `{"jsonrpc":"2.0"}`,
	`{}`, `[]`, `null`, `"x"`, `1`, `not json`, `{"id":1,"result":{}`, `{"id":1,"result":{}}x`,
	`{"id":1e2,"result":{}}`, `{"id":-3,"result":{}}`, `{"id":99999999999999999999,"result":{}}`,
	"{\"id\":1,\"re\u017fult\":{}}", "{\"\xff\":1,\"id\":2}",
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, ok := scanMessage(b); ok && !json.Valid(b) {
			t.Fatalf("%q: scanMessage accepted invalid JSON", b)
		}
		got, gerr := decodeFrame(b)
		want, werr := DecodeMessage(b)
		if !sameError(gerr, werr) {
			t.Fatalf("%q: decodeFrame error %v, DecodeMessage error %v", b, gerr, werr)
		}
		if gerr != nil {
			return
		}
		if !bytes.Equal(got.ID, want.ID) || got.Method != want.Method || !bytes.Equal(got.Result, want.Result) ||
			!reflect.DeepEqual(got.Error, want.Error) {
			t.Fatalf("%q:\ndecodeFrame   %s\nDecodeMessage %s", b, show(got), show(want))
		}
		// The result checks agree too.
		_, werr = CheckToolResult(want)
		if gerr := checkToolCall(got); !sameError(gerr, werr) {
			t.Fatalf("%q: checkToolCall %v, CheckToolResult %v", b, gerr, werr)
		}
		if toolResultOK(got.Result) && werr != nil {
			t.Fatalf("%q: toolResultOK accepts what CheckToolResult rejects: %v", b, werr)
		}
	})
}

func show(m Message) string {
	return fmt.Sprintf("id=%s method=%q result=%s error=%+v", m.ID, m.Method, m.Result, m.Error)
}

func TestDecodeFrameSeeds(t *testing.T) {
	fast := 0
	for _, s := range frameSeeds {
		b := []byte(s)
		got, gerr := decodeFrame(b)
		want, werr := DecodeMessage(b)
		if !sameError(gerr, werr) || !bytes.Equal(got.ID, want.ID) || got.Method != want.Method ||
			!bytes.Equal(got.Result, want.Result) || !reflect.DeepEqual(got.Error, want.Error) {
			t.Errorf("%s:\ndecodeFrame   %s %v\nDecodeMessage %s %v", s, show(got), gerr, show(want), werr)
			continue
		}
		_, werr = CheckToolResult(want)
		if gerr := checkToolCall(got); !sameError(gerr, werr) {
			t.Errorf("%s: checkToolCall %v, CheckToolResult %v", s, gerr, werr)
		}
		if _, ok := scanMessage(b); ok {
			fast++
		}
	}
	// Most seeds are there to be sent to DecodeMessage; the plain ones
	// must not be.
	for _, s := range frameSeeds[:3] {
		m, ok := scanMessage([]byte(s))
		if !ok || !toolResultOK(m.Result) {
			t.Errorf("the fast path refused a plain frame: %s", s)
		}
	}
	if fast < 20 {
		t.Errorf("only %d seeds read by the fast path", fast)
	}
}
