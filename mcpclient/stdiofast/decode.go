package stdiofast

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentapp/agentapp/internal/jsonscan"
)

// decodeToolResult decodes the result of a tools/call into what the SDK's
// client would return for it. raw must be JSON text that json.Valid
// accepts (a frame's result always is), or nil for a response without one.
//
// The SDK decodes a result twice with its JSON package, and each decode
// allocates a 32 KiB read buffer whatever the size of the message. The
// results servers actually send (text, image, audio, resource links and
// embedded resources, structuredContent, isError, _meta, annotations) are
// read here in place with jsonscan instead. Anything else — another
// content type, a multi-round-trip field, a member given twice, a value of
// an unexpected type, very deep nesting — is handed to the SDK's own
// decoder, so that the answer, or the error, is always the SDK's.
func decodeToolResult(raw []byte) (*mcp.CallToolResult, error) {
	if res, ok := decodeToolResultFast(raw); ok {
		return res, nil
	}
	res := new(mcp.CallToolResult)
	if err := res.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return res, nil
}

// maxFastDepth bounds the nesting the fast decoder follows; deeper values
// go to the SDK's decoder, which refuses more than 1000 levels.
const maxFastDepth = 500

// decodeToolResultFast reports false when the result is not one it reads
// exactly as the SDK does. Keys are matched exactly, as the SDK's decoder
// matches them (encoding/json would also take "Content" for "content").
func decodeToolResultFast(raw []byte) (*mcp.CallToolResult, bool) {
	res := &mcp.CallToolResult{}
	var content []mcp.Content
	complete := false
	ok := eachMember(raw, func(key, val []byte) (bit uint16, ok bool) {
		switch string(key) {
		case "content":
			if isNull(val) {
				return 1 << 0, true
			}
			content, ok = decodeContentList(val)
			return 1 << 0, ok
		case "structuredContent":
			res.StructuredContent, ok = decodeAny(val, 1)
			return 1 << 1, ok
		case "isError":
			res.IsError, ok = decodeBool(val)
			return 1 << 2, ok
		case "_meta":
			res.Meta, ok = decodeMeta(val)
			return 1 << 3, ok
		case "resultType":
			// "complete" (protocol 2026-07-28) says only that this is
			// the result; any other kind is the SDK decoder's.
			complete = string(val) == `"complete"`
			return 1 << 4, complete
		case "inputRequests", "requestState":
			return 0, false // multi-round-trip results: the SDK's decoder reads them
		}
		return 0, true
	})
	if !ok {
		return nil, false
	}
	if content == nil {
		content = []mcp.Content{} // the SDK's decoder never leaves it nil
	}
	res.Content = content
	if complete {
		// The SDK's decoder keeps the kind in an unexported field (which
		// its MarshalJSON writes back): a copy of a result it decoded
		// carries it.
		out := completeResult()
		out.Meta, out.Content, out.StructuredContent, out.IsError = res.Meta, res.Content, res.StructuredContent, res.IsError
		return &out, true
	}
	return res, true
}

// completeResult is an empty result of kind "complete" as the SDK's
// decoder builds it; made on first use (the SDK's decoder allocates a
// buffer of 32 KiB, which a start of serve should not pay for).
var completeResult = sync.OnceValue(func() mcp.CallToolResult {
	var r mcp.CallToolResult
	if err := r.UnmarshalJSON([]byte(`{"content":[],"resultType":"complete"}`)); err != nil {
		panic(err)
	}
	return r
})

func decodeContentList(v []byte) ([]mcp.Content, bool) {
	if v[0] != '[' {
		return nil, false
	}
	out := []mcp.Content{}
	ok := true
	jsonscan.ForEachElement(v, func(e []byte) {
		if !ok {
			return
		}
		var c mcp.Content
		if c, ok = decodeContent(e); ok {
			out = append(out, c)
		}
	})
	return out, ok
}

// contentFields are the members of a content block the fast decoder
// reads; a block with any other member the SDK knows (icons, and those of
// tool_use and tool_result) goes to the SDK's decoder.
type contentFields struct {
	typ, text, mimeType, uri, name, title, description string
	data                                               []byte
	size                                               *int64
	meta                                               mcp.Meta
	annotations                                        *mcp.Annotations
	resource                                           *mcp.ResourceContents
}

func decodeContent(v []byte) (mcp.Content, bool) {
	var f contentFields
	ok := eachMember(v, func(key, val []byte) (bit uint16, ok bool) {
		switch string(key) {
		case "type":
			f.typ, ok = decodeString(val)
			return 1 << 0, ok
		case "text":
			f.text, ok = decodeString(val)
			return 1 << 1, ok
		case "mimeType":
			f.mimeType, ok = decodeString(val)
			return 1 << 2, ok
		case "data":
			f.data, ok = decodeBytes(val)
			return 1 << 3, ok
		case "uri":
			f.uri, ok = decodeString(val)
			return 1 << 4, ok
		case "name":
			f.name, ok = decodeString(val)
			return 1 << 5, ok
		case "title":
			f.title, ok = decodeString(val)
			return 1 << 6, ok
		case "description":
			f.description, ok = decodeString(val)
			return 1 << 7, ok
		case "size":
			f.size, ok = decodeSize(val)
			return 1 << 8, ok
		case "_meta":
			f.meta, ok = decodeMeta(val)
			return 1 << 9, ok
		case "annotations":
			f.annotations, ok = decodeAnnotations(val)
			return 1 << 10, ok
		case "resource":
			f.resource, ok = decodeResourceContents(val)
			return 1 << 11, ok
		case "icons", "id", "input", "toolUseId", "content", "structuredContent", "isError":
			return 0, false
		}
		return 0, true // a member the SDK ignores
	})
	if !ok {
		return nil, false
	}
	switch f.typ {
	case "text":
		return &mcp.TextContent{Text: f.text, Meta: f.meta, Annotations: f.annotations}, true
	case "image":
		return &mcp.ImageContent{MIMEType: f.mimeType, Data: f.data, Meta: f.meta, Annotations: f.annotations}, true
	case "audio":
		return &mcp.AudioContent{MIMEType: f.mimeType, Data: f.data, Meta: f.meta, Annotations: f.annotations}, true
	case "resource_link":
		return &mcp.ResourceLink{URI: f.uri, Name: f.name, Title: f.title, Description: f.description,
			MIMEType: f.mimeType, Size: f.size, Meta: f.meta, Annotations: f.annotations}, true
	case "resource":
		return &mcp.EmbeddedResource{Resource: f.resource, Meta: f.meta, Annotations: f.annotations}, true
	}
	return nil, false // tool_use, tool_result, or a type the SDK refuses
}

func decodeResourceContents(v []byte) (*mcp.ResourceContents, bool) {
	if isNull(v) {
		return nil, true
	}
	r := &mcp.ResourceContents{}
	ok := eachMember(v, func(key, val []byte) (bit uint16, ok bool) {
		switch string(key) {
		case "uri":
			r.URI, ok = decodeString(val)
			return 1 << 0, ok
		case "mimeType":
			r.MIMEType, ok = decodeString(val)
			return 1 << 1, ok
		case "text":
			r.Text, ok = decodeString(val)
			return 1 << 2, ok
		case "blob":
			r.Blob, ok = decodeBytes(val)
			return 1 << 3, ok
		case "_meta":
			r.Meta, ok = decodeMeta(val)
			return 1 << 4, ok
		}
		return 0, true
	})
	return r, ok
}

func decodeAnnotations(v []byte) (*mcp.Annotations, bool) {
	if isNull(v) {
		return nil, true
	}
	a := &mcp.Annotations{}
	ok := eachMember(v, func(key, val []byte) (bit uint16, ok bool) {
		switch string(key) {
		case "audience":
			a.Audience, ok = decodeRoles(val)
			return 1 << 0, ok
		case "lastModified":
			a.LastModified, ok = decodeString(val)
			return 1 << 1, ok
		case "priority":
			if isNull(val) {
				return 1 << 2, true
			}
			a.Priority, ok = decodeFloat(val)
			return 1 << 2, ok
		}
		return 0, true
	})
	return a, ok
}

// eachMember calls f for each member of the JSON object v, in order, and
// reports whether v is an object whose members all decoded: false when it
// is not an object, when f reports false, or when a member f reads (one it
// gives a bit) comes twice, which the SDK's decoder would merge or
// overwrite and so is left to it. f returns bit 0 for a member it skips.
func eachMember(v []byte, f func(key, val []byte) (bit uint16, ok bool)) bool {
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	ok := true
	var seen uint16
	jsonscan.ForEachMember(v, func(key, val []byte) {
		if !ok {
			return
		}
		var bit uint16
		bit, ok = f(key, val)
		if seen&bit != 0 {
			ok = false
		}
		seen |= bit
	})
	return ok
}

func decodeRoles(v []byte) ([]mcp.Role, bool) {
	if isNull(v) {
		return nil, true
	}
	if v[0] != '[' {
		return nil, false
	}
	roles := []mcp.Role{}
	ok := true
	jsonscan.ForEachElement(v, func(e []byte) {
		if !ok {
			return
		}
		var s string
		if e[0] != '"' {
			ok = false
			return
		}
		if s, ok = jsonscan.String(e); ok {
			roles = append(roles, mcp.Role(s))
		}
	})
	return roles, ok
}

// decodeMeta reads a _meta object; null leaves it nil, as the SDK does.
func decodeMeta(v []byte) (mcp.Meta, bool) {
	if isNull(v) {
		return nil, true
	}
	if v[0] != '{' {
		return nil, false
	}
	m, ok := decodeAny(v, 1)
	if !ok {
		return nil, false
	}
	return mcp.Meta(m.(map[string]any)), true
}

// decodeAny decodes a JSON value into the Go value encoding/json gives an
// interface: maps, slices, float64, string, bool or nil.
func decodeAny(v []byte, depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	switch v[0] {
	case '{':
		m := map[string]any{}
		ok := true
		jsonscan.ForEachMember(v, func(key, val []byte) {
			if !ok {
				return
			}
			var x any
			if x, ok = decodeAny(val, depth+1); ok {
				m[string(key)] = x
			}
		})
		return m, ok
	case '[':
		a := []any{}
		ok := true
		jsonscan.ForEachElement(v, func(e []byte) {
			if !ok {
				return
			}
			var x any
			if x, ok = decodeAny(e, depth+1); ok {
				a = append(a, x)
			}
		})
		return a, ok
	case '"':
		return jsonscan.String(v)
	case 't':
		return true, true
	case 'f':
		return false, true
	case 'n':
		return nil, true
	}
	return decodeFloat(v)
}

func decodeFloat(v []byte) (float64, bool) {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// decodeString reads a string member; null leaves it empty, as the SDK
// does, and any other type is left to the SDK's decoder (which refuses it).
func decodeString(v []byte) (string, bool) {
	if isNull(v) {
		return "", true
	}
	if v[0] != '"' {
		return "", false
	}
	return jsonscan.String(v)
}

func decodeBool(v []byte) (bool, bool) {
	switch {
	case bytes.Equal(v, []byte("true")):
		return true, true
	case bytes.Equal(v, []byte("false")), isNull(v):
		return false, true
	}
	return false, false
}

// decodeBytes reads base64 data as the SDK does: standard encoding, with
// padding, line breaks ignored; null leaves it nil.
func decodeBytes(v []byte) ([]byte, bool) {
	if isNull(v) {
		return nil, true
	}
	if v[0] != '"' {
		return nil, false // the SDK's decoder also takes an array of numbers
	}
	src := v[1 : len(v)-1]
	if end, ascii := jsonscan.PlainStringEnd(v, 0); end != len(v) || !ascii {
		s, ok := jsonscan.String(v)
		if !ok {
			return nil, false
		}
		src = []byte(s)
	}
	dst := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	n, err := base64.StdEncoding.Decode(dst, src)
	if err != nil {
		return nil, false
	}
	return dst[:n], true
}

// decodeSize reads a resource link's size, an integer; null leaves it nil.
func decodeSize(v []byte) (*int64, bool) {
	if isNull(v) {
		return nil, true
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, false
	}
	return &n, true
}

func isNull(v []byte) bool { return len(v) == 4 && string(v) == "null" }
