package guard

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/internal/editdist"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// Known is what a policy's names are checked against: the tools that
// exist when the host starts.
type Known struct {
	// Local are the local tools' names.
	Local []string
	// Running maps each running server to the names of its tools.
	Running map[string][]string
	// Down are the servers that are configured but not running (failed,
	// disabled, waiting for a login or an approval): their tools are
	// unknown, so a name that may be theirs is only a warning.
	Down []string
}

// CheckNames checks that every name in the confirm list (AGENT_GUARD_CONFIRM)
// and every pattern of the permission rules names something configured. A
// name that matches nothing is an error naming it (with the nearest known
// name), since a rule that silently matches nothing is a guard left off by
// a typo. A name that may belong to a server that is down is a warning
// instead: the server may start later (/mcp enable, a login).
func (c Config) CheckNames(k Known) (warnings []string, err error) {
	var errs []error
	servers := make([]string, 0, len(k.Running)+len(k.Down))
	var allTools []string
	for s, tools := range k.Running {
		servers = append(servers, s)
		allTools = append(allTools, tools...)
	}
	servers = append(servers, k.Down...)
	slices.Sort(servers)
	allTools = append(allTools, k.Local...)
	slices.Sort(allTools)
	allTools = slices.Compact(allTools)
	down := func(s string) bool { return slices.Contains(k.Down, s) }
	mayBeDown := func() string {
		if len(k.Down) == 0 {
			return ""
		}
		return fmt.Sprintf("servers configured but not running (%s) may offer it", strings.Join(k.Down, ", "))
	}
	// anyTool checks a bare tool name.
	anyTool := func(where, name string, local bool) {
		if slices.Contains(k.Local, name) {
			if !local {
				errs = append(errs, fmt.Errorf("%s names %s, a local tool; permission rules are about MCP servers' tools (use %s to ask before a local tool)", where, quote(name), EnvConfirm))
			}
			return
		}
		for _, tools := range k.Running {
			if slices.Contains(tools, name) {
				return
			}
		}
		if m := mayBeDown(); m != "" {
			warnings = append(warnings, fmt.Sprintf("%s names %s, which no running server offers; the %s", where, quote(name), m))
			return
		}
		errs = append(errs, fmt.Errorf("%s names %s, but no local tool or MCP server tool has that name%s", where, quote(name), didYouMean(name, allTools)))
	}
	for _, n := range c.Confirm {
		anyTool(EnvConfirm, n, true)
	}
	for _, r := range c.Permissions.Rules {
		p := r.Pattern
		where := fmt.Sprintf("the rule %q of %s", r.String(), r.Source)
		switch {
		case p.Server == "" && p.Tool == "":
		case p.Server == "":
			anyTool(where, p.Tool, false)
		case down(p.Server):
			warnings = append(warnings, fmt.Sprintf("%s names MCP server %s, which is configured but not running; the rule applies when it runs", where, quote(p.Server)))
		default:
			tools, ok := k.Running[p.Server]
			if !ok {
				errs = append(errs, fmt.Errorf("%s names MCP server %s, but no server of that name is configured%s", where, quote(p.Server), didYouMean(p.Server, servers)))
				continue
			}
			if p.Tool != "" && !slices.Contains(tools, p.Tool) {
				errs = append(errs, fmt.Errorf("%s names tool %s of MCP server %s, but the server offers no tool of that name%s", where, quote(p.Tool), quote(p.Server), didYouMean(p.Tool, tools)))
			}
		}
	}
	return warnings, errors.Join(errs...)
}

func quote(s string) string { return `"` + textsafe.Escape(s) + `"` }

// maxNamesShown bounds the names an error lists when none is near.
const maxNamesShown = 10

// didYouMean is "; did you mean X?" for the nearest of known (the same but
// for case, or within two edits), else the known names, at most ten.
func didYouMean(name string, known []string) string {
	best, bestD := "", 3
	if len([]rune(name)) <= 3 {
		bestD = 2
	}
	for _, k := range known {
		if strings.EqualFold(k, name) {
			best = k
			break
		}
		if d := editdist.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return "; did you mean " + quote(best) + "?"
	}
	if len(known) == 0 {
		return ""
	}
	shown := known
	more := ""
	if len(shown) > maxNamesShown {
		shown, more = shown[:maxNamesShown], fmt.Sprintf(" and %d more", len(known)-maxNamesShown)
	}
	q := make([]string, len(shown))
	for i, s := range shown {
		q[i] = textsafe.Escape(s)
	}
	return "; known: " + strings.Join(q, ", ") + more
}
