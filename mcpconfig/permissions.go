package mcpconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentapp/agentapp/guard"
)

// maxRulesPerFile bounds the permission rules one file may hold.
const maxRulesPerFile = 1000

// ScopedRules are the permission rules of one config file.
type ScopedRules struct {
	Scope Scope
	File  string
	Rules []guard.Rule
}

// permissions reads a file's "permissions" object:
//
//	"permissions": {"allow": ["memory:*"], "ask": ["files:read_file"], "deny": ["files:write_file"]}
//
// the shape of Claude Code's settings, with agentapp's patterns (see
// guard.ParsePattern). A wrong shape, an unknown key or a bad pattern is
// an error naming the file and the entry: a rule that is silently dropped
// could be a deny.
func (f *File) permissions(scope Scope) (ScopedRules, error) {
	out := ScopedRules{Scope: scope, File: f.Path}
	var raw json.RawMessage
	for _, m := range f.top {
		if m.name == "permissions" {
			raw = m.value
		}
	}
	if raw == nil || isNull(raw) {
		return out, nil
	}
	fail := func(format string, args ...any) error {
		return &Error{File: f.Path, Field: "permissions", Msg: fmt.Sprintf(format, args...)}
	}
	obj, err := objectFields(raw)
	if err != nil {
		return out, fail(`want an object like {"allow": ["server:*"], "ask": [...], "deny": ["server:tool"]}`)
	}
	if dup := obj.duplicate(); dup != "" {
		return out, fail("%q is given twice; keep one list", dup)
	}
	source := fmt.Sprintf("%s (%s scope)", f.Path, scope)
	for _, m := range obj.fields {
		perm, err := guard.ParsePermission(m.name)
		if err != nil {
			return out, fail("unknown key %q; want allow, ask or deny, each a list of patterns", m.name)
		}
		var pats []string
		if err := json.Unmarshal(m.value, &pats); err != nil {
			return out, fail("%q: want a list of strings like [\"server:*\", \"server:tool\"]", m.name)
		}
		for _, s := range pats {
			if len(out.Rules) >= maxRulesPerFile {
				return out, fail("more than %d rules; use server:* patterns", maxRulesPerFile)
			}
			p, err := guard.ParsePattern(s)
			if err != nil {
				return out, fail("%s: %v", m.name, err)
			}
			out.Rules = append(out.Rules, guard.Rule{Pattern: p, Permission: perm, Source: source})
		}
	}
	return out, nil
}

// AddAllow adds pattern to the "allow" list of the file's "permissions"
// (creating either), keeping the other lists and members as they are; a
// pattern already allowed is not added twice. It does not save the file.
func (f *File) AddAllow(pattern string) error {
	if _, err := guard.ParsePattern(pattern); err != nil {
		return err
	}
	var raw json.RawMessage
	for _, m := range f.top {
		if m.name == "permissions" {
			raw = m.value
		}
	}
	var obj jsonFields
	if raw != nil && !isNull(raw) {
		var err error
		if obj, err = objectFields(raw); err != nil {
			return &Error{File: f.Path, Field: "permissions", Msg: "not an object; fix it before adding a rule"}
		}
	}
	var allow []string
	at := -1
	for i, m := range obj.fields {
		if m.name == "allow" {
			if err := json.Unmarshal(m.value, &allow); err != nil {
				return &Error{File: f.Path, Field: "permissions.allow", Msg: "not a list of strings; fix it before adding a rule"}
			}
			at = i
		}
	}
	if slices.Contains(allow, pattern) {
		return nil
	}
	if len(allow) >= maxRulesPerFile {
		return &Error{File: f.Path, Field: "permissions.allow", Msg: fmt.Sprintf("has %d rules already; use server:* patterns", len(allow))}
	}
	list, err := json.Marshal(append(allow, pattern))
	if err != nil {
		return err
	}
	if at < 0 {
		obj.fields = append(obj.fields, jsonField{name: "allow", value: list})
	} else {
		obj.fields[at].value = list
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range obj.fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMember(&b, m.name, m.value)
	}
	b.WriteByte('}')
	f.SetTop("permissions", b.Bytes())
	return nil
}
