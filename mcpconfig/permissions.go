package mcpconfig

import (
	"encoding/json"
	"fmt"

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
