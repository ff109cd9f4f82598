package stdiofast

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolResultCorpus is the differential corpus of decodeToolResult: every
// content type, with and without annotations and _meta, structuredContent
// of every JSON type or absent, isError, members the SDK ignores, escapes
// and non-ASCII text, and the shapes the fast decoder leaves to the SDK's
// decoder (including those the SDK refuses).
var toolResultCorpus = []string{
	`{}`,
	`{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
	`{"resultType":"complete","isError":true,"_meta":{"k":1}}`,
	`{"resultType":"input_required","inputRequests":{}}`,
	`{"resultType":"other","content":[]}`,
	`{"resultType":1}`,
	`{"resultType":null}`,
	`null`,
	`{"content":[]}`,
	`{"content":null}`,
	`{"content":[{"type":"text","text":"hello"}]}`,
	`{"content":[{"type":"text","text":""}]}`,
	`{"content":[{"type":"text"}]}`,
	`{"content":[{"type":"text","text":null}]}`,
	`{"content":[{"type":"text","text":"{\"orderId\":\"A-1024\",\"status\":\"shipped\"}"}],"structuredContent":{"orderId":"A-1024","status":"shipped"}}`,
	`{"content":[{"type":"text","text":"line\nbreak \"quoted\" tab\t back\\slash \/ \u00e9 \u4e2d \ud83d\ude00"}]}`,
	`{"content":[{"type":"text","text":"已发货 — ünïcödé 😀"}]}`,
	`{"content":[{"type":"text","text":"lone \ud800 surrogate and \udc00 and \ud800\u0041"}]}`,
	"{\"content\":[{\"type\":\"text\",\"text\":\"bad utf-8 \xff\xfe here\"}]}",
	`{"content":[{"type":"text","text":"hi","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-12T15:00:58Z"}}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":{}}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":null}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":{"audience":[],"priority":null,"extra":1}}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":{"audience":null}}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":{"priority":"high"}}]}`,
	`{"content":[{"type":"text","text":"hi","annotations":{"audience":[1]}}]}`,
	`{"content":[{"type":"text","text":"hi","_meta":{"k":"v","n":1.5,"a":[1,"x",null,true],"o":{}}}]}`,
	`{"content":[{"type":"text","text":"hi","_meta":null}]}`,
	`{"content":[{"type":"text","text":"hi","_meta":[]}]}`,
	`{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}`,
	`{"content":[{"type":"image","data":"","mimeType":"image/png"}]}`,
	`{"content":[{"type":"image","mimeType":"image/png"}]}`,
	`{"content":[{"type":"image","data":null}]}`,
	`{"content":[{"type":"image","data":"iVBO\nRw0K\r\nGgo="}]}`,
	`{"content":[{"type":"image","data":"iVBO\\nRw0KGgo="}]}`,
	`{"content":[{"type":"image","data":"not base64!"}]}`,
	`{"content":[{"type":"image","data":"iVBORw0KGgo"}]}`,
	`{"content":[{"type":"image","data":[1,2,3]}]}`,
	`{"content":[{"type":"audio","data":"UklGRg==","mimeType":"audio/wav","annotations":{"priority":1}}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","title":"A","description":"the file","mimeType":"text/plain","size":42}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a.txt","name":"a","size":null}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a.txt","size":1.5}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a.txt","size":1e3}]}`,
	`{"content":[{"type":"resource_link","uri":"file:///a.txt","size":99999999999999999999}]}`,
	`{"content":[{"type":"resource_link","uri":"x","icons":[{"src":"https://x/i.png","mimeType":"image/png"}]}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"test://hello","mimeType":"text/plain","text":"hello resource"}}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"test://bin","mimeType":"application/octet-stream","blob":"AAEC","_meta":{"x":1}}}]}`,
	`{"content":[{"type":"resource","resource":null}]}`,
	`{"content":[{"type":"resource"}]}`,
	`{"content":[{"type":"resource","resource":{"uri":7}}]}`,
	`{"content":[{"type":"resource","resource":{"uri":"a","blob":"@@"}}]}`,
	`{"content":[{"type":"tool_use","id":"t1","name":"x","input":{"a":1}}]}`,
	`{"content":[{"type":"tool_result","toolUseId":"t1","content":[{"type":"text","text":"r"}]}]}`,
	`{"content":[{"type":"bogus"}]}`,
	`{"content":[{"text":"no type"}]}`,
	`{"content":[{"type":null}]}`,
	`{"content":[null]}`,
	`{"content":[1]}`,
	`{"content":{"type":"text","text":"an object, not a list"}}`,
	`{"content":"text"}`,
	`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/gif"},{"type":"resource_link","uri":"u","name":"n"},{"type":"resource","resource":{"uri":"r","text":"t"}}]}`,
	`{"content":[{"type":"text","text":"a","type":"image"}]}`,
	`{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}]}`,
	`{"_meta":{"a":1},"_meta":{"b":2}}`,
	`{"content":[{"type":"text","text":"x","Text":"y","TYPE":"image"}],"Content":[{"type":"bogus"}],"IsError":true,"StructuredContent":1}`,
	`{"content":[{"type":"text","text":"x"}],"isError":true}`,
	`{"content":[{"type":"text","text":"x"}],"isError":false}`,
	`{"content":[{"type":"text","text":"x"}],"isError":null}`,
	`{"content":[{"type":"text","text":"x"}],"isError":"yes"}`,
	`{"content":[{"type":"text","text":"x"}],"isError":1}`,
	`{"structuredContent":{"a":{"b":[1,2,{"c":null}]},"d":-0.5e-3,"e":"s","f":true}}`,
	`{"structuredContent":[1,2,3]}`,
	`{"structuredContent":[]}`,
	`{"structuredContent":{}}`,
	`{"structuredContent":"just a string"}`,
	`{"structuredContent":42}`,
	`{"structuredContent":null}`,
	`{"structuredContent":1e400}`,
	`{"structuredContent":{"dup":1,"dup":2}}`,
	`{"structuredContent":{"\u0041":1,"A":2}}`,
	`{"structuredContent":12345678901234567890}`,
	`{"_meta":{"progressToken":"agentapp-1","agentapp/legacyToolResult":"{\"z\":1}"}}`,
	`{"_meta":null}`,
	`{"_meta":"x"}`,
	`{"content":[],"unknown":{"deep":[1,2,3]},"another":null}`,
	`{"inputRequests":{"a":{"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object"}}}},"requestState":"s"}`,
	`{"resultType":"complete","content":[{"type":"text","text":"x"}]}`,
	`{"requestState":"s","content":[]}`,
	`{"inputRequests":null}`,
	`{"\u0063ontent":[{"type":"text","text":"escaped key"}]}`,
	`{ "content" : [ { "type" : "text" , "text" : "spaced" } ] , "isError" : false }`,
	`[]`,
	`"a string"`,
	`3`,
	`{"content":[{"type":"text","text":"` + strings.Repeat("large text ", 20000) + `"}]}`,
	`{"structuredContent":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`,
	`{"structuredContent":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	`{"structuredContent":` + strings.Repeat(`{"a":`, 999) + `1` + strings.Repeat("}", 999) + `}`,
}

// sdkDecodeToolResult is the plain path: the SDK's decoding of a
// tools/call result.
func sdkDecodeToolResult(raw []byte) (*mcp.CallToolResult, error) {
	res := new(mcp.CallToolResult)
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, err
	}
	return res, nil
}

// diffToolResults compares two decoded results; "" means equal.
func diffToolResults(got, want *mcp.CallToolResult) string {
	if reflect.DeepEqual(got, want) {
		return "" // cmp.Diff takes minutes on deeply nested arrays
	}
	if d := cmp.Diff(want, got, cmpopts.IgnoreUnexported(mcp.CallToolResult{})); d != "" {
		return d
	}
	if want != nil && got.NeedsInput() != want.NeedsInput() {
		return "NeedsInput differs"
	}
	return ""
}

func checkToolResultDecode(t *testing.T, raw []byte) {
	t.Helper()
	want, wantErr := sdkDecodeToolResult(raw)
	got, gotErr := decodeToolResult(raw)
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("decoding %.300q: error %v, the SDK's %v", raw, gotErr, wantErr)
	}
	if wantErr != nil {
		if gotErr.Error() != wantErr.Error() {
			t.Errorf("decoding %.300q: error %q, the SDK's %q", raw, gotErr, wantErr)
		}
		return
	}
	if d := diffToolResults(got, want); d != "" {
		t.Errorf("decoding %.300q: differs from the SDK's (-SDK +ours):\n%s", raw, d)
	}
	// What is not exported (the result's kind) shows in its encoding.
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("decoding %.300q: encodes as %s, the SDK's as %s", raw, gb, wb)
	}
}

func TestDecodeToolResultMatchesSDK(t *testing.T) {
	fast := 0
	for _, raw := range toolResultCorpus {
		if !json.Valid([]byte(raw)) {
			t.Fatalf("corpus entry is not valid JSON: %.100s", raw)
		}
		checkToolResultDecode(t, []byte(raw))
		if _, ok := decodeToolResultFast([]byte(raw)); ok {
			fast++
		}
	}
	// Most of the corpus must take the fast path, or the test would only
	// compare the SDK's decoder with itself.
	if fast < len(toolResultCorpus)/2 {
		t.Errorf("only %d of %d corpus entries took the fast path", fast, len(toolResultCorpus))
	}
}

// TestDecodeToolResultFastPathTaken pins which everyday results the fast
// decoder reads itself, so that a change sending them to the SDK's decoder
// (correct, but slow) is noticed.
func TestDecodeToolResultFastPathTaken(t *testing.T) {
	for _, raw := range []string{
		`{"content":[{"type":"text","text":"{\"status\":\"shipped\"}"}],"structuredContent":{"status":"shipped"}}`,
		`{"content":[{"type":"text","text":"Echo: hi"}]}`,
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png","annotations":{"priority":1}}],"isError":false,"_meta":{"a":1}}`,
		`{"content":[{"type":"resource_link","uri":"u","name":"n","size":3},{"type":"resource","resource":{"uri":"r","blob":"AA=="}}]}`,
	} {
		if _, ok := decodeToolResultFast([]byte(raw)); !ok {
			t.Errorf("%s went to the SDK's decoder", raw)
		}
	}
}

// FuzzDecodeCallToolResult holds decodeToolResult to the SDK's decoding of
// every valid JSON text: the same result, or an error where the SDK errs.
func FuzzDecodeCallToolResult(f *testing.F) {
	for _, raw := range toolResultCorpus {
		if len(raw) < 4096 {
			f.Add([]byte(raw))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // results come from frames json.Valid accepted
		}
		checkToolResultDecode(t, raw)
	})
}

func TestResultType(t *testing.T) {
	for raw, want := range map[string]string{
		`{"resultType":"task","task":{"resultType":"complete"}}`:         "task",
		`{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}`: "",
		`{"resultType":"input_required"}`:                                "input_required",
		`{"resultType":"complete","content":[]}`:                         "complete",
		`{"resultType":1}`:                                               "",
		`{"content":[]}`:                                                 "",
		`[]`:                                                             "",
	} {
		if got := ResultType([]byte(raw)); got != want {
			t.Errorf("ResultType(%s) = %q, want %q", raw, got, want)
		}
	}
}
