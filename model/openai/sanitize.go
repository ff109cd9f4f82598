package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// Sanitize returns a copy of a tool's input JSON Schema that OpenAI-compatible
// chat-completion endpoints (OpenAI, GLM, DeepSeek, Ollama, vLLM…) accept as
// function parameters. MCP servers publish whatever their schema library
// emits; the engine keeps that untouched and the provider calls Sanitize when
// it builds a request. The input is never modified.
//
// The rules, in order:
//   - an empty, null, invalid or non-object schema becomes
//     {"type":"object","properties":{}};
//   - local references ("#/$defs/X", "#/definitions/X", any "#/…" JSON
//     pointer) are inlined; keywords next to a $ref win over the target's; a
//     reference that recurs inside its own expansion is cut to a stub that
//     keeps the target's type and description; a non-local reference is
//     dropped;
//   - "$schema", "$id", "$defs", "definitions", "$anchor" and "$comment" are
//     dropped everywhere (a property that happens to be called "definitions"
//     is kept: only keyword positions are rewritten, never property names or
//     data such as enum, const, default and examples);
//   - "required" that is null, empty or not a list of strings is removed;
//   - an array schema without "items" gets "items": {} (items: true too);
//   - a top-level anyOf/oneOf union is flattened into one object: the
//     properties of all object branches are merged (a property whose schemas
//     differ between branches becomes an anyOf of them) and required is the
//     intersection of the branches' required lists (plus the top level's
//     own); a top-level allOf is merged the same way with the union of the
//     required lists;
//   - the top level gets "type":"object" and "properties" ({} when absent).
//
// Key order is preserved, so properties reach the model in the order the
// server declared them.
func Sanitize(schema json.RawMessage) json.RawMessage {
	root, err := decodeOrdered(schema)
	top, ok := root.(*object)
	if err != nil || !ok {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	s := &sanitizer{root: top, stack: []string{"#"}} // "#" is the root, being expanded
	out, ok := s.schema(top).(*object)
	if !ok {
		out = &object{}
	}
	out = flattenTop(out)
	if t, ok := out.get("type"); !ok || t != "object" {
		out.setFirst("type", "object")
	}
	if p, ok := out.get("properties"); !ok {
		out.setAfter("type", "properties", &object{})
	} else if _, isObj := p.(*object); !isObj {
		out.set("properties", &object{})
	}
	var buf bytes.Buffer
	encodeOrdered(&buf, out)
	return buf.Bytes()
}

// maxRefDepth bounds nested reference expansion, so that a schema built to
// explode (or a very deep chain) is cut rather than expanded forever.
const maxRefDepth = 32

// dropKeywords are removed wherever a schema appears.
var dropKeywords = map[string]bool{
	"$schema": true, "$id": true, "$defs": true, "definitions": true,
	"$anchor": true, "$comment": true, "$dynamicAnchor": true, "$vocabulary": true,
}

// Keywords whose value is a schema, a list of schemas or a map of schemas.
var (
	schemaKeywords = map[string]bool{
		"items": true, "additionalProperties": true, "additionalItems": true,
		"unevaluatedProperties": true, "unevaluatedItems": true, "contains": true,
		"not": true, "if": true, "then": true, "else": true, "propertyNames": true,
		"contentSchema": true,
	}
	schemaListKeywords = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
	schemaMapKeywords  = map[string]bool{"properties": true, "patternProperties": true, "dependentSchemas": true}
)

type sanitizer struct {
	root  *object
	stack []string // references being expanded, innermost last
	// expansions counts inlined references; past maxExpansions the rest are
	// stubs, so that a schema whose definitions reference each other several
	// times cannot grow exponentially.
	expansions int
}

// maxExpansions bounds the number of references inlined in one schema.
const maxExpansions = 1000

// schema returns a sanitized copy of the schema v.
func (s *sanitizer) schema(v any) any {
	o, ok := v.(*object)
	if !ok {
		return v // true/false schemas and anything odd pass as they are
	}
	if ref, ok := o.get("$ref"); ok {
		if r, isStr := ref.(string); isStr {
			return s.withRef(o, r)
		}
	}
	out := &object{}
	for _, k := range o.keys {
		val := o.m[k]
		switch {
		case dropKeywords[k] || k == "$ref" || k == "$dynamicRef":
			continue
		case k == "required":
			if req := cleanRequired(val); req != nil {
				out.set(k, req)
			}
		case k == "items":
			if b, isBool := val.(bool); isBool && b {
				out.set(k, &object{})
				continue
			}
			if list, isList := val.([]any); isList { // draft-07 tuple form
				out.set(k, s.schemaList(list))
				continue
			}
			out.set(k, s.schema(val))
		case schemaKeywords[k]:
			out.set(k, s.schema(val))
		case schemaListKeywords[k]:
			if list, isList := val.([]any); isList {
				out.set(k, s.schemaList(list))
			}
		case schemaMapKeywords[k]:
			if m, isObj := val.(*object); isObj {
				cp := &object{}
				for _, name := range m.keys {
					cp.set(name, s.schema(m.m[name]))
				}
				out.set(k, cp)
			}
		default:
			out.set(k, val) // data (enum, default…) and plain keywords
		}
	}
	if hasType(out, "array") {
		if _, ok := out.get("items"); !ok {
			out.set("items", &object{})
		}
	}
	return out
}

func (s *sanitizer) schemaList(list []any) []any {
	out := make([]any, len(list))
	for i, v := range list {
		out[i] = s.schema(v)
	}
	return out
}

// withRef resolves the reference of o and lays o's other keywords over the
// result.
func (s *sanitizer) withRef(o *object, ref string) any {
	base := &object{}
	if target, ok := s.resolve(ref); ok {
		switch t := target.(type) {
		case *object:
			base = t
		case bool:
			if !t {
				base.set("not", &object{})
			}
		}
	}
	siblings := &object{}
	for _, k := range o.keys {
		if k != "$ref" {
			siblings.set(k, o.m[k])
		}
	}
	if len(siblings.keys) == 0 {
		return base
	}
	over, _ := s.schema(siblings).(*object)
	for _, k := range over.keys {
		base.set(k, over.m[k])
	}
	if hasType(base, "array") {
		if _, ok := base.get("items"); !ok {
			base.set("items", &object{})
		}
	}
	return base
}

// resolve returns the sanitized expansion of a local reference; ok is false
// when ref is not local or points nowhere.
func (s *sanitizer) resolve(ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	target, ok := pointer(s.root, ref[1:])
	if !ok {
		return nil, false
	}
	for _, r := range s.stack {
		if r == ref {
			return stub(target), true
		}
	}
	if len(s.stack) >= maxRefDepth || s.expansions >= maxExpansions {
		return stub(target), true
	}
	s.expansions++
	s.stack = append(s.stack, ref)
	out := s.schema(target)
	s.stack = s.stack[:len(s.stack)-1]
	return out, true
}

// stub stands in for a recursive reference: the target's type and
// description, and an open "properties"/"items" so that it stays valid.
func stub(target any) any {
	o, ok := target.(*object)
	if !ok {
		return &object{}
	}
	out := &object{}
	if t, ok := o.get("type"); ok {
		out.set("type", t)
	}
	if d, ok := o.get("description"); ok {
		if _, isStr := d.(string); isStr {
			out.set("description", d)
		}
	}
	if hasType(out, "object") {
		out.set("properties", &object{})
	}
	if hasType(out, "array") {
		out.set("items", &object{})
	}
	return out
}

// pointer follows a JSON pointer (RFC 6901, in its URI fragment form).
func pointer(root any, ptr string) (any, bool) {
	if p, err := url.PathUnescape(ptr); err == nil {
		ptr = p
	}
	if ptr == "" {
		return root, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false // a named anchor: not supported
	}
	cur := root
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case *object:
			v, ok := c.get(tok)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// cleanRequired returns the distinct strings of a required list, or nil when
// there are none.
func cleanRequired(v any) []any {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out []any
	for _, e := range list {
		if s, ok := e.(string); ok && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func hasType(o *object, want string) bool {
	switch t := o.m["type"].(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

// flattenTop merges a top-level union into one object schema.
func flattenTop(o *object) *object {
	_, hasAny := o.get("anyOf")
	_, hasOne := o.get("oneOf")
	_, hasAll := o.get("allOf")
	if !hasAny && !hasOne && !hasAll {
		return o
	}
	props, required := collect(o, 0)
	out := &object{}
	for _, k := range o.keys {
		switch k {
		case "anyOf", "oneOf", "allOf":
		case "properties":
			out.set(k, props)
		case "required":
			if len(required) > 0 {
				out.set(k, required)
			}
		default:
			out.set(k, o.m[k])
		}
	}
	if _, ok := out.get("properties"); !ok {
		out.set("properties", props)
	}
	if _, ok := out.get("required"); !ok && len(required) > 0 {
		out.set("required", required)
	}
	return out
}

// collect returns the properties and required names an object schema
// contributes, including those of its unions (depth bounds nesting).
func collect(o *object, depth int) (*object, []any) {
	props := &object{}
	if p, ok := o.m["properties"].(*object); ok {
		for _, k := range p.keys {
			props.set(k, p.m[k])
		}
	}
	required := cleanRequired(o.m["required"])
	if depth > 8 {
		return props, required
	}
	if all, ok := o.m["allOf"].([]any); ok {
		for _, b := range all {
			if bo, ok := b.(*object); ok {
				p, r := collect(bo, depth+1)
				mergeProps(props, p, false)
				required = unionStrings(required, r)
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		branches, ok := o.m[key].([]any)
		if !ok {
			continue
		}
		var common []any
		first := true
		for _, b := range branches {
			bo, ok := b.(*object)
			if !ok || !objectLike(bo) {
				continue // e.g. {"type":"null"}: contributes nothing
			}
			p, r := collect(bo, depth+1)
			mergeProps(props, p, true)
			if first {
				common, first = r, false
			} else {
				common = intersectStrings(common, r)
			}
		}
		required = unionStrings(required, common)
	}
	return props, required
}

func objectLike(o *object) bool {
	if hasType(o, "object") {
		return true
	}
	for _, k := range []string{"properties", "required", "anyOf", "oneOf", "allOf"} {
		if _, ok := o.get(k); ok {
			return true
		}
	}
	return false
}

// mergeProps adds src's properties to dst. When a name is in both with a
// different schema, alternatives makes it an anyOf of the two; otherwise the
// first one stays.
func mergeProps(dst, src *object, alternatives bool) {
	for _, k := range src.keys {
		v := src.m[k]
		old, ok := dst.get(k)
		if !ok {
			dst.set(k, v)
			continue
		}
		if !alternatives || sameJSON(old, v) {
			continue
		}
		var alts []any
		if oo, isObj := old.(*object); isObj && len(oo.keys) == 1 && oo.keys[0] == "anyOf" {
			alts, _ = oo.m["anyOf"].([]any)
		} else {
			alts = []any{old}
		}
		if containsJSON(alts, v) {
			continue
		}
		alts = append(append([]any(nil), alts...), v)
		dst.set(k, &object{keys: []string{"anyOf"}, m: map[string]any{"anyOf": alts}})
	}
}

func containsJSON(list []any, v any) bool {
	for _, e := range list {
		if sameJSON(e, v) {
			return true
		}
	}
	return false
}

func sameJSON(a, b any) bool {
	var x, y bytes.Buffer
	encodeOrdered(&x, a)
	encodeOrdered(&y, b)
	return bytes.Equal(x.Bytes(), y.Bytes())
}

func unionStrings(a, b []any) []any {
	seen := map[any]bool{}
	for _, e := range a {
		seen[e] = true
	}
	for _, e := range b {
		if !seen[e] {
			seen[e] = true
			a = append(a, e)
		}
	}
	return a
}

func intersectStrings(a, b []any) []any {
	in := map[any]bool{}
	for _, e := range b {
		in[e] = true
	}
	var out []any
	for _, e := range a {
		if in[e] {
			out = append(out, e)
		}
	}
	return out
}

// object is a JSON object that remembers its key order.
type object struct {
	keys []string
	m    map[string]any
}

func (o *object) get(k string) (any, bool) {
	v, ok := o.m[k]
	return v, ok
}

func (o *object) set(k string, v any) {
	if o.m == nil {
		o.m = map[string]any{}
	}
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// setFirst sets k and moves it to the front.
func (o *object) setFirst(k string, v any) {
	o.remove(k)
	o.set(k, v)
	copy(o.keys[1:], o.keys[:len(o.keys)-1])
	o.keys[0] = k
}

// setAfter adds k right after the key after (at the end when after is absent).
func (o *object) setAfter(after, k string, v any) {
	o.remove(k)
	o.set(k, v)
	for i, key := range o.keys[:len(o.keys)-1] {
		if key == after {
			copy(o.keys[i+2:], o.keys[i+1:len(o.keys)-1])
			o.keys[i+1] = k
			return
		}
	}
}

func (o *object) remove(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, key := range o.keys {
		if key == k {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

// decodeOrdered parses JSON into *object, []any, string, json.Number, bool
// and nil values. Duplicate keys keep the last value, as encoding/json does.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{m: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				o.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return o, nil
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return list, nil
		}
		return nil, errors.New("unexpected delimiter")
	default:
		return tok, nil
	}
}

// encodeOrdered writes v as compact JSON, without HTML escaping.
func encodeOrdered(buf *bytes.Buffer, v any) {
	switch t := v.(type) {
	case *object:
		buf.WriteByte('{')
		for i, k := range t.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeString(buf, k)
			buf.WriteByte(':')
			encodeOrdered(buf, t.m[k])
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			encodeOrdered(buf, e)
		}
		buf.WriteByte(']')
	case string:
		encodeString(buf, t)
	case json.Number:
		buf.WriteString(t.String())
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	default:
		b, err := json.Marshal(t)
		if err != nil {
			buf.WriteString("null")
			return
		}
		buf.Write(b)
	}
}

func encodeString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Truncate(buf.Len() - 1) // Encode's newline
}
