package toolsearch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxSchemaBytes bounds a tool's input schema as the model is offered it.
// Every request that offers the tool carries the schema, so one server's
// megabyte schema would make every request of a session that loaded the
// tool too large for the context window. Real schemas are a few KB.
const MaxSchemaBytes = 32 << 10

// maxArgDescBytes bounds an argument's description in a reduced schema.
const maxArgDescBytes = 200

// CapSchema returns schema as it is when it is at most MaxSchemaBytes.
// A larger one is reduced to its top-level arguments (each with its type
// and a short description) and the required list: the model can still
// call the tool, and the server checks the arguments in full. When even
// that is over the bound, or the schema is not a JSON object, keep is
// false and the tool is to be left out. warning names the server and the
// tool whenever the schema was not kept as it is.
func CapSchema(server, tool string, schema json.RawMessage) (capped json.RawMessage, warning string, keep bool) {
	if len(schema) <= MaxSchemaBytes {
		return schema, "", true
	}
	if server == "" {
		server = "(local)"
	}
	what := fmt.Sprintf("server %s: the input schema of tool %s is %d bytes, over the %d-byte bound", server, tool, len(schema), MaxSchemaBytes)
	reduced, ok := reduceSchema(schema)
	if !ok || len(reduced) > MaxSchemaBytes {
		return nil, what + "; the tool is left out", false
	}
	return reduced, fmt.Sprintf("%s; it is offered reduced to its top-level arguments (%d bytes)", what, len(reduced)), true
}

// reduceSchema keeps the top-level arguments of an object schema, each
// with its type and a cut description, and the required ones.
func reduceSchema(schema json.RawMessage) (json.RawMessage, bool) {
	var top struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, false
	}
	type arg struct {
		Type        any    `json:"type,omitempty"`
		Description string `json:"description,omitempty"`
	}
	props := make(map[string]arg, len(top.Properties))
	for name, raw := range top.Properties {
		var p struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		}
		_ = json.Unmarshal(raw, &p) // a property that is not an object keeps no type
		var a arg
		switch t := p.Type.(type) {
		case string:
			a.Type = t
		case []any:
			if slices.IndexFunc(t, func(v any) bool { _, ok := v.(string); return !ok }) < 0 {
				a.Type = t
			}
		}
		a.Description = cutBytes(p.Description, maxArgDescBytes)
		props[name] = a
	}
	var required []string
	for _, r := range top.Required {
		if _, ok := props[r]; ok && !slices.Contains(required, r) {
			required = append(required, r)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	b, err := json.Marshal(out)
	return b, err == nil
}

// cutBytes cuts s to at most n bytes on a character boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
