package host

import (
	"fmt"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
)

// serverTools is the tool list of one MCP server, as merge takes it. server
// is the name used in warnings and errors; the tools' own Origin is not
// consulted, so a caller can merge tools from any source under a name.
type serverTools struct {
	server string
	tools  []*agent.Tool
}

// MergeReport says what the merge did about name clashes between local and
// MCP tools. Both lists are in table order. Warnings holds at most one line,
// ready to be shown to the user; it is empty when nothing clashed.
type MergeReport struct {
	// Overridden lists the local tools replaced by an MCP tool of the same
	// name (default policy).
	Overridden []Clash
	// Skipped lists the MCP tools left out because a local tool of the same
	// name wins (strict policy).
	Skipped []Clash
	// Warnings are the lines to show the user, one per policy that applied.
	Warnings []string
}

// Clash is one tool name offered both locally and by an MCP server.
type Clash struct {
	Tool   string
	Server string
}

func (c Clash) String() string { return fmt.Sprintf("%s (from %s)", c.Tool, c.Server) }

// merge builds the one tool table a run uses from the local tools and the
// tools of each MCP server, in that order: local tools first, then each
// server's tools in the order of servers (the configuration order). The
// policy lives here, with its only user, rather than in package agent: the
// tool loop knows nothing of MCP servers or of the environment.
//
// A local tool and an MCP tool with the same name clash. By default the MCP
// tool wins: a user who plugged a server in expects its tool to be used, and
// the report's warning names every overridden tool, because a silent
// override is a mystery later. With strict set (guard.EnvMCPStrict, read by
// guard.FromEnv) the local tool wins and the warning names the switch and
// every skipped tool.
//
// The same name from two MCP servers keeps the first server's tool (in
// configuration order, so the outcome does not depend on which connected
// first) and skips the later one's, with a warning that names both servers
// and suggests toolPrefix: one clash must not keep the host from starting,
// and the run-time rule (live.go) is the same. A duplicate within the local
// tools or within one server is an error too. A server's tool without a
// name is skipped with a warning: it cannot be offered to a model, and one
// broken tool must not keep the host from starting (the bridge already
// skips such tools; this covers any other Server).
func merge(local []*agent.Tool, servers []serverTools, strict bool, hints Hints) (*agent.ToolSet, MergeReport, error) {
	var report MergeReport
	localIdx := make(map[string]int, len(local))
	for i, t := range local {
		if t == nil || t.Name == "" {
			return nil, report, fmt.Errorf("local tool #%d has no name", i+1)
		}
		if _, dup := localIdx[t.Name]; dup {
			return nil, report, fmt.Errorf("two local tools are named %q", t.Name)
		}
		localIdx[t.Name] = i
	}

	// owner maps an MCP tool name to the server that offers it.
	owner := map[string]string{}
	// shadowed lists, per pair (first server, later server), the names the
	// later one offers too; its tools of those names are left out.
	shadowed := map[[2]string][]string{}
	shadowOrder := map[[2]string]int{}
	overridden := make([]bool, len(local))
	var fromServers []*agent.Tool
	for _, s := range servers {
		seen := map[string]bool{}
		nameless := 0
		for _, t := range s.tools {
			if t == nil || t.Name == "" {
				nameless++
				continue
			}
			if seen[t.Name] {
				return nil, report, fmt.Errorf("MCP server %q offered two tools named %q; the server is misbehaving, use allowedTools or excludedTools to pick one", s.server, t.Name)
			}
			seen[t.Name] = true
			if other, dup := owner[t.Name]; dup {
				shadowed[[2]string{other, s.server}] = append(shadowed[[2]string{other, s.server}], t.Name)
				if _, ok := shadowOrder[[2]string{other, s.server}]; !ok {
					shadowOrder[[2]string{other, s.server}] = len(shadowOrder)
				}
				continue
			}
			owner[t.Name] = s.server
			if i, clash := localIdx[t.Name]; clash {
				c := Clash{Tool: t.Name, Server: s.server}
				if strict {
					report.Skipped = append(report.Skipped, c)
					continue
				}
				overridden[i] = true
				report.Overridden = append(report.Overridden, c)
			}
			fromServers = append(fromServers, t)
		}
		if nameless > 0 {
			report.Warnings = append(report.Warnings, fmt.Sprintf("MCP server %q offered %d %s without a name; skipped", s.server, nameless, plural(nameless, "tool", "tools")))
		}
	}

	set := new(agent.ToolSet)
	for i, t := range local {
		if overridden[i] {
			continue
		}
		if err := set.Add(t); err != nil {
			return nil, report, fmt.Errorf("local tool: %w", err)
		}
	}
	for _, t := range fromServers {
		if err := set.Add(t); err != nil {
			return nil, report, fmt.Errorf("MCP server %q: %w", owner[t.Name], err)
		}
	}

	pairs := make([][2]string, len(shadowOrder))
	for p, i := range shadowOrder {
		pairs[i] = p
	}
	for _, p := range pairs {
		names := shadowed[p]
		report.Warnings = append(report.Warnings, fmt.Sprintf(
			"MCP servers %q and %q both offer %s %s; %q's %s used and %q's skipped; set \"toolPrefix\" on one of them in the config file (for example \"toolPrefix\": %q) so both can be used",
			p[0], p[1], plural(len(names), "a tool named", "tools named"), quoteList(names), p[0], plural(len(names), "is", "are"), p[1], prefixHint(p[1])))
	}
	if len(report.Overridden) > 0 {
		w := "MCP tools override local tools of the same name: " + joinClashes(report.Overridden)
		if hints.KeepLocalTools != "" {
			w += "; " + hints.KeepLocalTools + " to keep the local tools instead"
		}
		report.Warnings = append(report.Warnings, w)
	}
	if len(report.Skipped) > 0 {
		w := "local tools win name clashes: skipped MCP tools " + joinClashes(report.Skipped)
		if hints.LocalToolsWin != "" {
			w = hints.LocalToolsWin + ", so local tools win: skipped MCP tools " + joinClashes(report.Skipped)
		}
		report.Warnings = append(report.Warnings, w)
	}
	return set, report, nil
}

func joinClashes(cs []Clash) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// prefixHint suggests a toolPrefix for a server: its name reduced to the
// characters tool names allow, followed by an underscore.
func prefixHint(server string) string {
	var b strings.Builder
	for _, r := range server {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "srv_"
	}
	return b.String() + "_"
}

// quoteList quotes names for a warning, at most 5 of them.
func quoteList(names []string) string {
	const most = 5
	q := make([]string, 0, most+1)
	for i, n := range names {
		if i == most {
			q = append(q, fmt.Sprintf("and %d more", len(names)-most))
			break
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}

// BuildTools makes the one tool table of a host from the local tools and
// the connected servers. Each server's tools, as the server's config let
// them through (allowedTools, excludedTools, toolPrefix are applied by the
// bridge), are wrapped with the guards and merged with the local tools
// (guardAndMerge). Local tools are never wrapped.
//
// The host builds its first table with it; the red-team tests call it, so
// the table a test inspects is the table a user gets.
func BuildTools(local []*agent.Tool, servers []Server, g *guard.Guards) (*agent.ToolSet, MergeReport, error) {
	return guardAndMerge(local, serverLists(servers), g, Hints{})
}

// serverLists are the tools each server offers now.
func serverLists(servers []Server) []serverTools {
	lists := make([]serverTools, len(servers))
	for i, s := range servers {
		lists[i] = serverTools{server: s.Name(), tools: modelTools(s, s.Tools())}
	}
	return lists
}

// guardAndMerge wraps every tool of lists with the guards (guard.Wrap:
// allowlist, injection scan, confirmation, PII mask) and then merges them
// with the local tools, with the strict policy taken from the guards'
// config (guard.EnvMCPStrict) so one reading of the environment decides
// both. BuildTools and the rebuild of a running host's table (buildLive)
// both end here, so a table is guarded the same way however it was made.
//
// Wrapping comes before the merge so that an MCP tool that wins a name
// clash is the guarded one. A server tool without an Origin is an error:
// the guards would take it for a local tool and let it through unguarded.
func guardAndMerge(local []*agent.Tool, lists []serverTools, g *guard.Guards, hints Hints) (*agent.ToolSet, MergeReport, error) {
	guarded := make([]serverTools, len(lists))
	var cuts []string // descriptions over 2 KB (cutDescription), schemas over 32 KB (capSchema)
	for i, l := range lists {
		wrapped := make([]*agent.Tool, 0, len(l.tools))
		for _, t := range l.tools {
			if t == nil {
				wrapped = append(wrapped, nil) // merge skips it with a warning
				continue
			}
			if t.IsLocal() {
				return nil, MergeReport{}, fmt.Errorf("MCP server %q offered tool %q without an origin, so the guards could not tell it from a local tool; this is a bug in the server bridge", l.server, t.Name)
			}
			t = cutDescription(t, &cuts)
			if t = capSchema(t, &cuts); t == nil {
				continue
			}
			wrapped = append(wrapped, guard.Wrap(t, g))
		}
		guarded[i] = serverTools{server: l.server, tools: wrapped}
	}
	// A local tool is wrapped only when AGENT_GUARD_CONFIRM names it
	// (guard.Wrap returns the others as they are).
	wrappedLocal := make([]*agent.Tool, len(local))
	for i, t := range local {
		wrappedLocal[i] = guard.Wrap(t, g)
	}
	set, report, err := merge(wrappedLocal, guarded, g.Config().MCPStrict, hints)
	report.Warnings = append(report.Warnings, cuts...)
	return set, report, err
}
