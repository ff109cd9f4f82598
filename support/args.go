package support

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
)

// ArgError reports a tool argument that breaks a rule. Its message names the
// field and the rule, and is written for the model (or a person) to correct
// the call and retry.
type ArgError struct {
	Tool  string
	Field string
	Msg   string
}

func (e *ArgError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("invalid arguments for %s: %s", e.Tool, e.Msg)
	}
	return fmt.Sprintf("invalid arguments for %s: %s %s", e.Tool, e.Field, e.Msg)
}

// textRule is what one string argument must satisfy.
type textRule struct {
	name     string
	maxChars int
}

// args is a decoded arguments object of one tool.
type args struct {
	tool string
	m    map[string]any
}

// decodeArgs decodes raw arguments and rejects properties outside allowed,
// mirroring "additionalProperties": false in the schemas.
func decodeArgs(tool string, raw json.RawMessage, allowed ...string) (args, error) {
	m, err := agent.DecodeArgs(raw)
	if err != nil {
		return args{}, &ArgError{Tool: tool, Msg: err.Error()}
	}
	var extra []string
	for k := range m {
		if !slices.Contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return args{}, &ArgError{Tool: tool, Msg: fmt.Sprintf("unexpected argument(s) %q; %s accepts only %s",
			extra, tool, strings.Join(allowed, ", "))}
	}
	return args{tool: tool, m: m}, nil
}

// text returns a required string argument with surrounding white space
// removed. It fails when the argument is missing, not a string, longer than
// the rule allows (counted in Unicode code points before trimming, as JSON
// Schema's maxLength does) or blank.
func (a *args) text(r textRule) (string, error) {
	v, ok := a.m[r.name]
	if !ok {
		return "", &ArgError{Tool: a.tool, Field: r.name, Msg: "is required"}
	}
	s, ok := v.(string)
	if !ok {
		return "", &ArgError{Tool: a.tool, Field: r.name, Msg: fmt.Sprintf("must be a string, got %s", kindOf(v))}
	}
	if n := utf8.RuneCountInString(s); n > r.maxChars {
		return "", &ArgError{Tool: a.tool, Field: r.name,
			Msg: fmt.Sprintf("is %d characters long; the limit is %d characters, shorten it", n, r.maxChars)}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", &ArgError{Tool: a.tool, Field: r.name, Msg: "must not be blank"}
	}
	return s, nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
