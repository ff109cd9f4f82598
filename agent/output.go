package agent

import (
	"encoding/json"
	"fmt"
)

// JSONOutput is a tool output encoded once, as json.Marshal encodes it,
// for tools that keep results and hand the same one out many times (a
// cache): FormatOutput then returns its text without encoding it again, and
// a caller that embeds the text in JSON of its own, as an MCP server does in
// a result's text block, finds it already encoded as a JSON string.
//
// Its JSON encoding is its text, so code that marshals tool outputs (the
// PII mask, a transcript) sees the same JSON as for the value it was made
// from. The zero JSONOutput stands for null.
type JSONOutput struct {
	text   string
	quoted string
}

// EncodeOutput encodes v as a JSONOutput: json.Marshal(v), so the text is
// compact and HTML-escaped, exactly what FormatOutput would return for v.
func EncodeOutput(v any) (JSONOutput, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return JSONOutput{}, fmt.Errorf("tool output cannot be encoded as JSON: %w", err)
	}
	text := string(b)
	q, err := json.Marshal(text)
	if err != nil {
		return JSONOutput{}, fmt.Errorf("tool output cannot be encoded as JSON: %w", err)
	}
	return JSONOutput{text: text, quoted: string(q)}, nil
}

// String returns the JSON text.
func (o JSONOutput) String() string {
	if o.text == "" {
		return "null"
	}
	return o.text
}

// Quoted returns the JSON text encoded as a JSON string, as json.Marshal
// encodes a string (HTML-escaping included).
func (o JSONOutput) Quoted() string {
	if o.text == "" {
		return `"null"`
	}
	return o.quoted
}

// IsObject reports whether the text is a JSON object.
func (o JSONOutput) IsObject() bool { return len(o.text) > 0 && o.text[0] == '{' }

// MarshalJSON returns the JSON text.
func (o JSONOutput) MarshalJSON() ([]byte, error) { return []byte(o.String()), nil }
