package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkMarshalResult requires marshalResult to give MarshalJSON's bytes.
func checkMarshalResult(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	want, werr := res.MarshalJSON()
	got, gerr := marshalResult(res)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("errors differ: MarshalJSON %v, marshalResult %v", werr, gerr)
	}
	if string(got) != string(want) {
		t.Fatalf("marshalResult differs from MarshalJSON:\n got %s\nwant %s", got, want)
	}
}

func TestMarshalResultMatchesSDK(t *testing.T) {
	text := func(s string) []mcp.Content { return []mcp.Content{&mcp.TextContent{Text: s}} }
	for name, res := range map[string]*mcp.CallToolResult{
		"text":               {Content: text(`{"orderId":"A-1024","status":"已发货"}`), StructuredContent: json.RawMessage(`{"orderId":"A-1024","status":"已发货"}`)},
		"html and separator": {Content: text("<b>&\u2028\u2029</b>"), StructuredContent: json.RawMessage("{\"a\":\"<b>&\u2028</b>\"}")},
		"spaced raw":         {Content: text("x"), StructuredContent: json.RawMessage("{ \"a\" : [ 1 , 2 ],\n\t\"b\" : \"c d\" }")},
		"escapes and bytes":  {Content: text("\x00\x1f\t\n\"\\ \xff\xfe 😀")},
		"error":              {IsError: true, Content: text("getOrderStatus failed: boom")},
		"empty text":         {Content: text("")},
		"typed nil raw":      {Content: text("x"), StructuredContent: json.RawMessage(nil)},
		"annotations":        {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"meta":               {Meta: mcp.Meta{"k": "v"}, Content: text("x")},
		"two blocks":         {Content: append(text("a"), &mcp.TextContent{Text: "b"})},
		"map structured":     {Content: text("x"), StructuredContent: map[string]any{"a": 1}},
		"no content":         {},
	} {
		t.Run(name, func(t *testing.T) { checkMarshalResult(t, res) })
	}
}

// checkRawObjectResponse requires the direct path's answer to a tool that
// returned raw (json.RawMessage) to be what the SDK makes of runTool's
// result, whether or not appendRawObjectResponse writes it.
func checkRawObjectResponse(t *testing.T, raw json.RawMessage) {
	t.Helper()
	id, err := jsonrpc.MakeID(float64(7))
	if err != nil {
		t.Fatal(err)
	}
	data, err := successResult("t", raw).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want, err := encodeMessage(nil, &jsonrpc.Response{ID: id, Result: data})
	if err != nil {
		t.Fatal(err)
	}
	got := want
	if plainObject(raw) {
		got = appendRawObjectResponse(nil, id, raw)
	}
	if string(got) != string(want) {
		t.Fatalf("the answer for output %q differs from the SDK's:\n got %s\nwant %s", raw, got, want)
	}
}

// TestRawObjectResponseMatchesSDK: what json.Marshal makes of a tool's
// result (the form getOrderStatus's cache keeps) is written directly, and
// the bytes are the SDK's; other raw output is left to the general way.
func TestRawObjectResponseMatchesSDK(t *testing.T) {
	for _, v := range []any{
		map[string]any{"orderId": "A-1024", "status": "已发货", "eta": "明天 18:00 前送达"},
		map[string]any{"s": "<b>包裹</b> & \"引号\" \u2028 \u2029 \\ \n\t\x01 \x7f"},
		map[string]any{"nested": []any{1.5, true, nil, map[string]any{"k": "\\\""}}},
		map[string]any{},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if !plainObject(b) {
			t.Errorf("json.Marshal's %s is not taken by the direct encoding", b)
		}
		checkRawObjectResponse(t, b)
	}
	for s, want := range map[string]bool{`{"a":"b","c":"d"}`: true, ` { "a" : "é" } `: true, `{}`: true, `{"a":1}`: true,
		`{"a":"b",}`: false, `{"a" "b"}`: false, `{"a":"b"}x`: false, `{"a":"\x01"}`: false, "{\"a\":\"\xff\"}": true, `{"a":"b"`: false} {
		if got := rawObject([]byte(s)); got != want || got != isJSONObject(s) {
			t.Errorf("rawObject(%q) = %v, want %v (isJSONObject %v)", s, got, want, isJSONObject(s))
		}
	}
	for _, s := range []string{`{ "a":1}`, `{"a":"<"}`, "{\"a\":\"\xff\"}", `{"a":}`, `[1]`, `"x"`, ``, "{\"a\":\"\u2028\"}"} {
		if plainObject(json.RawMessage(s)) {
			t.Errorf("%q is taken by the direct encoding", s)
		}
		checkRawObjectResponse(t, json.RawMessage(s))
	}
}

// FuzzMarshalResult compares marshalResult with MarshalJSON on arbitrary
// text and, when it is a JSON object, the same bytes as structuredContent;
// and the direct answer to that text as a tool's raw output with the SDK's.
func FuzzMarshalResult(f *testing.F) {
	for _, s := range []string{`{"a":"<b>"}`, "plain \u2028 text", "\xff", `{ "x" : 1 }`, `[]`, "", `{"a":"\\u003c\"\\"}`} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, isError bool) {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}
		if isJSONObject(s) {
			res.StructuredContent = json.RawMessage(s)
		}
		checkMarshalResult(t, res)
		checkRawObjectResponse(t, json.RawMessage(s))
		if got, want := rawObject([]byte(s)), isJSONObject(s); got != want {
			t.Fatalf("rawObject(%q) = %v, isJSONObject %v", s, got, want)
		}
	})
}

func BenchmarkMarshalResult(b *testing.B) {
	out := `{"orderId":"A-1024","status":"已发货","eta":"明天 18:00 前送达"}`
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: out}}, StructuredContent: json.RawMessage(out)}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			marshalResult(res)
		}
	})
	b.Run("MarshalJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res.MarshalJSON()
		}
	})
}
