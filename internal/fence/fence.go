// Package fence marks text from outside the program (a knowledge-base hit,
// an MCP resource, an MCP App view's context) as data for a model: the text
// goes between two fence lines that the notices sent with it name, and a
// closing fence line inside the text is neutralised, so the text cannot end
// the fence early and have the rest read as instructions. It knows no
// domain: the knowledge base, the host and the front ends all fence here.
package fence

import "strings"

// The fence lines.
const (
	Open  = "<<<DATA"
	Close = "DATA>>>"
	// closeNeutral replaces Close inside fenced text.
	closeNeutral = "DATA> >>"
)

// Text puts text between the fence lines, neutralising any closing fence
// line inside it.
func Text(text string) string {
	return Open + "\n" + strings.ReplaceAll(text, Close, closeNeutral) + "\n" + Close
}
