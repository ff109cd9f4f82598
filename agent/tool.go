// Package agent is the engine: the tool abstraction, the ordered tool set and
// the tool loop that asks a model, runs the tools it calls and feeds the
// results back until the model answers.
//
// The engine knows nothing about where a tool comes from. A tool served by an
// external MCP server and a tool written in Go look the same here; all
// protocol detail stays at the MCP boundary (packages mcpserver and mcpclient).
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/google/jsonschema-go/jsonschema"
)

// ExecuteFunc runs a tool with arguments that are a JSON object (or absent,
// in which case args is nil). It returns a value the loop shows the model:
// a string is passed as is, a json.RawMessage verbatim (a tool that keeps
// results it hands out many times, such as a cache, can encode them once
// that way), anything else is marshalled to JSON.
type ExecuteFunc func(ctx context.Context, args json.RawMessage) (any, error)

// Tool is one capability the model can call.
//
// InputSchema is kept as raw JSON so that a schema received from an MCP server
// passes through the engine byte for byte, and so that a local tool has one
// schema value that both the loop's validation and the MCP server publish.
type Tool struct {
	// Name is what the model calls the tool by.
	Name string
	// Title is a short human-readable name, shown in UIs.
	Title string
	// Description tells the model when and how to use the tool.
	Description string
	// InputSchema is the JSON Schema of the arguments object.
	InputSchema json.RawMessage
	// OutputSchema optionally describes the structured output.
	OutputSchema json.RawMessage
	// ReadOnly reports that the tool does not change anything.
	ReadOnly bool
	// Idempotent reports that repeating a call with the same arguments has no
	// further effect.
	Idempotent bool
	// Destructive reports whether the tool may delete or overwrite data
	// (meaningful only when ReadOnly is false). Nil means not stated, which
	// MCP clients read as true: a tool is assumed destructive until its
	// author says otherwise.
	Destructive *bool
	// OpenWorld reports whether the tool reaches outside its own domain
	// (the web, other systems) rather than a closed set of records. Nil
	// means not stated, which MCP clients read as true.
	OpenWorld *bool
	// Origin says where the tool comes from: "" for a local tool, the server
	// name for a tool adapted from an MCP server.
	Origin string
	// Validate asks the loop to check arguments against InputSchema before
	// Execute (and so before any approval a guard asks for). Local tools
	// and MCP tools set it; the schema of an MCP tool that this validator
	// cannot compile is left to its server, which validates anyway.
	Validate bool
	// Execute runs the tool.
	Execute ExecuteFunc

	once     sync.Once
	resolved *jsonschema.Resolved
	quick    *quickSchema // nil when the schema is outside its subset
	compErr  error
}

// IsLocal reports whether the tool is implemented in this process.
func (t *Tool) IsLocal() bool { return t.Origin == "" }

// CheckArgs validates args against the tool's InputSchema. Absent arguments
// are checked as an empty object. The returned error names the offending
// field and rule; it is meant to be shown to the model so it can retry.
//
// The compiled schema is cached on first use. Schemas of the common flat
// shape (an object of string properties with length and pattern rules, as
// every local tool has) also get a direct check that accepts valid
// arguments without the general validator's reflective walk, about a third
// of a call's validation cost; arguments it does not accept go through the
// general validator, so every error message is the validator's own. That
// check reads plain arguments (a flat object of unescaped strings, nearly
// every call) in place, without decoding them, so a caller that validates
// and then runs the tool, which decodes its arguments itself, pays for one
// decoding, not two.
func (t *Tool) CheckArgs(args json.RawMessage) error {
	t.once.Do(func() {
		if len(t.InputSchema) == 0 {
			return
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(t.InputSchema, &s); err != nil {
			t.compErr = fmt.Errorf("tool %s has an invalid input schema: %w", t.Name, err)
			return
		}
		t.resolved, t.compErr = s.Resolve(nil)
		if t.compErr != nil {
			t.compErr = fmt.Errorf("tool %s has an invalid input schema: %w", t.Name, t.compErr)
			return
		}
		t.quick = compileQuick(t.InputSchema)
	})
	if t.compErr != nil {
		if !t.IsLocal() {
			return nil // a server's schema we cannot read: the server checks
		}
		return t.compErr
	}
	if t.quick.acceptsRaw(args) {
		return nil
	}
	v, err := DecodeArgs(args)
	if err != nil {
		return err
	}
	if t.resolved == nil || t.quick.accepts(v) {
		return nil
	}
	if err := t.resolved.Validate(v); err != nil {
		return &ArgsError{Tool: t.Name, Err: err}
	}
	return nil
}

// quickSchema is a direct check for the schema subset local tools use: an
// object whose properties are strings with optional minLength, maxLength
// and pattern, a required list, and additionalProperties true or false.
// It only ever says "valid"; anything else is left to the general
// validator, so it cannot change what is rejected or how it is reported.
type quickSchema struct {
	props    map[string]*quickString
	required []string
	closed   bool // additionalProperties: false
}

type quickString struct {
	minLen, maxLen int // -1 when absent
	pattern        *regexp.Regexp
}

// compileQuick returns the direct check for schema, or nil if schema uses
// anything outside the subset (any keyword not listed here, a non-string
// property, a boolean subschema).
func compileQuick(schema json.RawMessage) *quickSchema {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil
	}
	q := &quickSchema{props: map[string]*quickString{}}
	for k, raw := range top {
		switch k {
		case "description", "title", "$comment", "examples":
		case "type":
			var typ string
			if json.Unmarshal(raw, &typ) != nil || typ != "object" {
				return nil
			}
		case "required":
			if json.Unmarshal(raw, &q.required) != nil {
				return nil
			}
		case "additionalProperties":
			var open bool
			if json.Unmarshal(raw, &open) != nil {
				return nil
			}
			q.closed = !open
		case "properties":
			var props map[string]map[string]json.RawMessage
			if json.Unmarshal(raw, &props) != nil {
				return nil
			}
			for name, p := range props {
				qs := compileQuickString(p)
				if qs == nil {
					return nil
				}
				q.props[name] = qs
			}
		default:
			return nil
		}
	}
	if _, ok := top["type"]; !ok {
		return nil
	}
	return q
}

func compileQuickString(p map[string]json.RawMessage) *quickString {
	qs := &quickString{minLen: -1, maxLen: -1}
	for k, raw := range p {
		switch k {
		case "description", "title", "$comment", "examples":
		case "type":
			var typ string
			if json.Unmarshal(raw, &typ) != nil || typ != "string" {
				return nil
			}
		case "minLength", "maxLength":
			var n int
			if json.Unmarshal(raw, &n) != nil || n < 0 {
				return nil
			}
			if k == "minLength" {
				qs.minLen = n
			} else {
				qs.maxLen = n
			}
		case "pattern":
			var pat string
			if json.Unmarshal(raw, &pat) != nil {
				return nil
			}
			re, err := regexp.Compile(pat) // as the general validator compiles it
			if err != nil {
				return nil
			}
			qs.pattern = re
		default:
			return nil
		}
	}
	if _, ok := p["type"]; !ok {
		return nil
	}
	return qs
}

// accepts reports whether args certainly satisfy the schema. A nil
// quickSchema accepts nothing.
func (q *quickSchema) accepts(args map[string]any) bool {
	if q == nil {
		return false
	}
	for _, name := range q.required {
		if _, ok := args[name]; !ok {
			return false
		}
	}
	for k, v := range args {
		p, ok := q.props[k]
		if !ok {
			if q.closed {
				return false
			}
			continue
		}
		s, ok := v.(string)
		if !ok {
			return false
		}
		if p.minLen >= 0 || p.maxLen >= 0 {
			n := utf8.RuneCountInString(s)
			if n < p.minLen || (p.maxLen >= 0 && n > p.maxLen) {
				return false
			}
		}
		if p.pattern != nil && !p.pattern.MatchString(s) {
			return false
		}
	}
	return true
}

// acceptsRaw is accepts for arguments still encoded: it reports whether
// args are plain (see scanFlatStrings) and certainly satisfy the schema,
// reading them in place. Anything else, absent arguments included, is
// left to the decoding check. A duplicate key must pass with every value,
// which is stricter than the decoding (where the last one counts) and so
// never accepts what accepts would not. A nil quickSchema accepts nothing.
func (q *quickSchema) acceptsRaw(args []byte) bool {
	if q == nil || len(q.required) > 64 {
		return false
	}
	var seen uint64 // bit n: q.required[n] is present
	ok := scanFlatStrings(args, func(ks, ke, vs, ve int) bool {
		key := args[ks:ke]
		for n, r := range q.required {
			if r == string(key) {
				seen |= 1 << n
			}
		}
		p, ok := q.props[string(key)]
		if !ok {
			return !q.closed
		}
		s := args[vs:ve]
		if p.minLen >= 0 || p.maxLen >= 0 {
			n := utf8.RuneCount(s)
			if n < p.minLen || (p.maxLen >= 0 && n > p.maxLen) {
				return false
			}
		}
		return p.pattern == nil || p.pattern.Match(s)
	})
	return ok && seen == 1<<len(q.required)-1
}

// DecodeArgs decodes tool arguments, which must be a JSON object or absent
// (nil, empty or JSON null, all read as an empty object).
func DecodeArgs(args json.RawMessage) (map[string]any, error) {
	// The fast path takes only objects, so it can come before the check
	// for absent arguments and spare the usual call that check.
	if m, ok := decodeFlatStrings(args); ok {
		return m, nil
	}
	if isAbsent(args) {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(v))
	}
	return m, nil
}

// decodeFlatStrings is DecodeArgs' fast path. It exists because tool
// arguments are nearly always a small flat object of strings, such as
// {"orderId":"A-1024"}, and DecodeArgs runs on every call, while
// json.Unmarshal into an any goes through reflection and allocates for
// every token.
//
// It accepts what scanFlatStrings accepts; a duplicate key keeps its last
// value. For such input it returns what json.Unmarshal returns, and ok. On
// anything else it returns ok=false, and DecodeArgs decodes with
// json.Unmarshal, which gives the result or the error.
func decodeFlatStrings(args []byte) (m map[string]any, ok bool) {
	i := jsonscan.SkipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return nil, false
	}
	// Keys and values are cut from one copy of the input: one allocation
	// instead of one per string.
	all := string(args)
	m = map[string]any{}
	ok = scanFlatStrings(args, func(ks, ke, vs, ve int) bool {
		m[all[ks:ke]] = all[vs:ve]
		return true
	})
	if !ok {
		return nil, false
	}
	return m, true
}

// scanFlatStrings reports whether args are exactly one JSON object, with
// optional whitespace (space, tab, CR, LF) between tokens, whose keys and
// values are all strings without a backslash escape, without a control
// character (< 0x20) and in valid UTF-8. It calls member with the offsets
// of each key's and value's text (the quotes excluded, so args[ks:ke] is
// the key as it decodes), in order; member returning false stops the walk,
// and the report is then false. The UTF-8 check comes last, after every
// member has been seen.
func scanFlatStrings(args []byte, member func(ks, ke, vs, ve int) bool) bool {
	i := jsonscan.SkipSpace(args, 0)
	if i >= len(args) || args[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(args, i+1)
	if i < len(args) && args[i] == '}' {
		return jsonscan.SkipSpace(args, i+1) == len(args)
	}
	ascii := true // no byte >= 0x80 was seen, so the input need not be checked for valid UTF-8
	for {
		ke, a := jsonscan.PlainStringEnd(args, i)
		if ke < 0 {
			return false
		}
		ascii = ascii && a
		ks := i + 1
		i = jsonscan.SkipSpace(args, ke)
		if i >= len(args) || args[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(args, i+1)
		ve, a := jsonscan.PlainStringEnd(args, i)
		if ve < 0 {
			return false
		}
		ascii = ascii && a
		if !member(ks, ke-1, i+1, ve-1) {
			return false
		}
		i = jsonscan.SkipSpace(args, ve)
		if i >= len(args) {
			return false
		}
		if args[i] == '}' {
			break
		}
		if args[i] != ',' {
			return false
		}
		i = jsonscan.SkipSpace(args, i+1)
	}
	if jsonscan.SkipSpace(args, i+1) != len(args) {
		return false
	}
	// Outside strings only ASCII was accepted, so this checks the strings.
	return ascii || utf8.Valid(args)
}

// isAbsent reports whether args stand for no arguments: nothing, white
// space or JSON null.
func isAbsent(args json.RawMessage) bool {
	i := jsonscan.SkipSpace(args, 0)
	if i == len(args) {
		return true
	}
	rest := args[i:]
	return len(rest) >= 4 && string(rest[:4]) == "null" && jsonscan.SkipSpace(rest, 4) == len(rest)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("%T", v)
}

// ArgsError reports arguments that do not match a tool's input schema.
type ArgsError struct {
	Tool string
	Err  error
}

// maxArgsErrorRunes bounds the validator's message: it quotes the offending
// value, and a 20,000-character transcript echoed back would waste the
// model's context on its own input.
const maxArgsErrorRunes = 400

func (e *ArgsError) Error() string {
	msg := missingMessage(e.Err.Error())
	if r := []rune(msg); len(r) > maxArgsErrorRunes {
		msg = fmt.Sprintf("%s…(cut, %d characters in all)", string(r[:maxArgsErrorRunes]), len(r))
	}
	return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, msg)
}

func (e *ArgsError) Unwrap() error { return e.Err }

// FormatOutput turns a tool's output into the text the model sees.
func FormatOutput(v any) (string, error) {
	switch o := v.(type) {
	case string:
		return o, nil
	case json.RawMessage:
		return string(o), nil
	case []byte:
		return string(o), nil
	case nil:
		return "null", nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("tool output cannot be encoded as JSON: %w", err)
	}
	return string(b), nil
}

// ErrToolNotFound is wrapped by the error the model sees when it calls a
// tool that is not in the tool set.
var ErrToolNotFound = errors.New("unknown tool")

// missingRE matches the validator's message for required arguments left
// out at the top level, and quotedRE one of the names it lists.
var (
	missingRE = regexp.MustCompile(`^validating root: required: missing properties: \[(.*)\]$`)
	quotedRE  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// missingMessage says "topic is required" for the validator's "validating
// root: required: missing properties: ["topic"]", which a model or a user
// reads more easily; any other message is returned as it is.
func missingMessage(msg string) string {
	m := missingRE.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	var names []string
	for _, q := range quotedRE.FindAllString(m[1], -1) {
		n, err := strconv.Unquote(q)
		if err != nil {
			return msg
		}
		names = append(names, n)
	}
	switch len(names) {
	case 0:
		return msg
	case 1:
		return names[0] + " is required"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are required"
}
