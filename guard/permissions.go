package guard

import (
	"fmt"
	"strings"
)

// Permission is what the permission policy says about a call of an MCP
// tool: run it, ask the user first, or refuse it.
type Permission string

// The permissions.
const (
	Allow Permission = "allow"
	Ask   Permission = "ask"
	Deny  Permission = "deny"
)

// ParsePermission checks a permission word.
func ParsePermission(s string) (Permission, error) {
	switch p := Permission(strings.ToLower(strings.TrimSpace(s))); p {
	case Allow, Ask, Deny:
		return p, nil
	}
	return "", fmt.Errorf("unknown permission %q; want allow, ask or deny", s)
}

// Mode is the policy's default for a call no rule names.
type Mode string

// The modes.
const (
	// ModeDefault asks before an MCP tool its server does not declare
	// read-only (annotations.readOnlyHint) and runs the read-only ones.
	// The zero Mode is this one.
	ModeDefault Mode = "default"
	// ModeAllowAll runs every call no deny rule names without asking, for
	// scripts that have no one to ask. Deny rules and the allowlist still
	// hold.
	ModeAllowAll Mode = "allow-all"
)

// ParseMode checks a mode word; "" is ModeDefault.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", ModeDefault:
		return ModeDefault, nil
	case ModeAllowAll:
		return m, nil
	}
	return "", fmt.Errorf("unknown permission mode %q; want %s (ask before MCP tools that are not read-only) or %s (run every tool no deny rule names)", s, ModeDefault, ModeAllowAll)
}

// Pattern names MCP tools: "*" (every one), "SERVER:*" (every tool of a
// server), "SERVER:TOOL" (one tool of one server) or "TOOL" (a tool of
// that name on any server). TOOL is the name the tool is offered under
// (after the server's toolPrefix), as /tools and the questions show it.
type Pattern struct {
	// Server is "" for any server.
	Server string
	// Tool is "" for any tool.
	Tool string
	text string
}

// ParsePattern checks a pattern. Globs other than a whole "*" are refused:
// a rule must say exactly what it covers, so that a typo is an error
// rather than a rule that quietly matches nothing.
func ParsePattern(s string) (Pattern, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) (Pattern, error) {
		return Pattern{}, fmt.Errorf("permission pattern %q: %s; write *, SERVER:*, SERVER:TOOL or TOOL", s, why)
	}
	if t == "" {
		return bad("it is empty")
	}
	if strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == ',' }) {
		return bad("it contains white space, a control character or a comma")
	}
	if t == "*" {
		return Pattern{text: t}, nil
	}
	server, tool, scoped := strings.Cut(t, ":")
	if !scoped {
		if strings.Contains(t, "*") {
			return bad("* stands only for a whole server or every tool")
		}
		return Pattern{Tool: t, text: t}, nil
	}
	switch {
	case server == "" || server == "*":
		return bad("the server is missing before the colon (write TOOL alone for any server)")
	case tool == "":
		return bad("the tool is missing after the colon (write SERVER:* for every tool of the server)")
	case strings.Contains(server, "*") || (tool != "*" && strings.Contains(tool, "*")):
		return bad("* stands only for a whole server or every tool")
	case strings.Contains(tool, ":"):
		return bad("it has more than one colon")
	}
	if tool == "*" {
		tool = ""
	}
	return Pattern{Server: server, Tool: tool, text: t}, nil
}

// String is the pattern as written.
func (p Pattern) String() string { return p.text }

// Matches reports whether the pattern covers tool of server.
func (p Pattern) Matches(server, tool string) bool {
	return (p.Server == "" || p.Server == server) && (p.Tool == "" || p.Tool == tool)
}

// Rule is one line of the policy: a pattern and what it says.
type Rule struct {
	Pattern    Pattern
	Permission Permission
	// Source says where the rule comes from ("--deny", "the user scope
	// file F"), for the reason given when it decides a call.
	Source string
}

// String is the rule as the banner and reasons show it.
func (r Rule) String() string { return string(r.Permission) + " " + r.Pattern.String() }

// Permissions is the permission policy for MCP tools. The zero value is
// the default policy: ask before a tool not declared read-only.
type Permissions struct {
	Rules []Rule
	Mode  Mode
}

// Verdict is the policy's answer for one call and why.
type Verdict struct {
	Permission Permission
	// Rule is the rule that decided, nil when the default did.
	Rule *Rule
	// Why says how the verdict came about, for the audit log and the
	// model.
	Why string
}

// Decide says what the policy does with a call of tool from server.
// readOnly is what the server declared (annotations.readOnlyHint; a tool
// without annotations is not read-only). confirm reports that the tool is
// in AGENT_GUARD_CONFIRM.
//
// The order is that of Claude Code's rules: a deny rule anywhere wins,
// then an ask rule (or AGENT_GUARD_CONFIRM), then an allow rule; the mode
// and the server's annotation only decide what no rule names. So a
// server's annotation can relax the default question but never a rule
// the user wrote.
func (p Permissions) Decide(server, tool string, readOnly, confirm bool) Verdict {
	var ask, allow *Rule
	for i := range p.Rules {
		r := &p.Rules[i]
		if !r.Pattern.Matches(server, tool) {
			continue
		}
		switch r.Permission {
		case Deny:
			return Verdict{Permission: Deny, Rule: r, Why: fmt.Sprintf("the rule %q of %s denies it", r.String(), r.Source)}
		case Ask:
			if ask == nil {
				ask = r
			}
		case Allow:
			if allow == nil {
				allow = r
			}
		}
	}
	if p.Mode == ModeAllowAll {
		return Verdict{Permission: Allow, Why: "the permission mode " + string(ModeAllowAll) + " allows it"}
	}
	switch {
	case ask != nil:
		return Verdict{Permission: Ask, Rule: ask, Why: fmt.Sprintf("the rule %q of %s asks", ask.String(), ask.Source)}
	case confirm:
		return Verdict{Permission: Ask, Why: EnvConfirm + " names it"}
	case allow != nil:
		return Verdict{Permission: Allow, Rule: allow, Why: fmt.Sprintf("the rule %q of %s allows it", allow.String(), allow.Source)}
	case readOnly:
		return Verdict{Permission: Allow, Why: "its server declares it read-only"}
	}
	return Verdict{Permission: Ask, Why: "its server does not declare it read-only"}
}

// Describe is the policy in one line for the banner.
func (p Permissions) Describe() string {
	var b strings.Builder
	if p.Mode == ModeAllowAll {
		b.WriteString("permissions: allow-all (MCP tools run without asking")
		if n := p.count(Deny); n > 0 {
			fmt.Fprintf(&b, "; deny %s", p.list(Deny))
		}
		b.WriteString(")")
		return b.String()
	}
	b.WriteString("permissions: ask before MCP tools not declared read-only")
	for _, k := range []Permission{Deny, Ask, Allow} {
		if p.count(k) > 0 {
			fmt.Fprintf(&b, "; %s %s", k, p.list(k))
		}
	}
	return b.String()
}

func (p Permissions) count(k Permission) int {
	n := 0
	for _, r := range p.Rules {
		if r.Permission == k {
			n++
		}
	}
	return n
}

// maxListed bounds the patterns the banner lists per permission.
const maxListed = 8

func (p Permissions) list(k Permission) string {
	var names []string
	n := 0
	for _, r := range p.Rules {
		if r.Permission != k {
			continue
		}
		n++
		if len(names) < maxListed {
			names = append(names, r.Pattern.String())
		}
	}
	s := strings.Join(names, ", ")
	if n > len(names) {
		s += fmt.Sprintf(" and %d more", n-len(names))
	}
	return s
}
