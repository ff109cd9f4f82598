package mcpserver

import (
	"encoding/json"
	"testing"

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

// FuzzMarshalResult compares marshalResult with MarshalJSON on arbitrary
// text and, when it is a JSON object, the same bytes as structuredContent.
func FuzzMarshalResult(f *testing.F) {
	for _, s := range []string{`{"a":"<b>"}`, "plain \u2028 text", "\xff", `{ "x" : 1 }`, `[]`, ""} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, isError bool) {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}
		if isJSONObject(s) {
			res.StructuredContent = json.RawMessage(s)
		}
		checkMarshalResult(t, res)
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
