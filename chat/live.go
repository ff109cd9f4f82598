package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
)

// Supervised is a Server whose process is supervised while the chat runs
// (*mcpclient.Bridge): it can be restarted, reports its state, and its tool
// list can change (a restart lists the tools again; a server may announce
// notifications/tools/list_changed).
type Supervised interface {
	Server
	// Status reports the state (connected, restarting, down) and the
	// number of tools.
	Status() mcpclient.Status
	// Restart reconnects the server now and gives a server that is down
	// its automatic restarts back (/mcp restart).
	Restart(ctx context.Context) error
	// Refresh re-reads the tool list if the server announced a change, and
	// returns the list's generation, which grows whenever Tools may have
	// changed.
	Refresh(ctx context.Context) (uint64, error)
}

// refreshTimeout bounds the re-listing of tools before a model call.
const refreshTimeout = 10 * time.Second

// liveTools is the chat's tool table and what it was built from, so that
// a change of any server's tool list rebuilds it (before the next model
// call) and says what changed.
type liveTools struct {
	set     *agent.ToolSet
	report  MergeReport
	gens    []uint64   // per server: the generation the table was built from
	names   [][]string // per server: its tool names in the table's build
	offered [][]string // per server: the names it offered for this build, duplicates included
	skipped []string   // clash warnings already shown
}

// toolUse is what became of one server's tools in the table, read from
// the table itself: /mcp counts and /tools lists the same tools.
type toolUse struct {
	inUse   []string
	skipped []skippedTool // in the server's order
}

// skippedTool is a tool a server offers that the table does not take
// from it.
type skippedTool struct {
	name string
	// owner has the name in the table: "" for a local tool, else the MCP
	// server whose tool is kept.
	owner string
	// twice: the server offered the name more than once (only the first
	// can be in use); missing: the table has no tool of that name.
	twice, missing bool
}

// use reads from the table which of the tools server offered for this
// build are in use and why the others are not.
func (l *liveTools) use(i int, server string) toolUse {
	var u toolUse
	if l.set == nil || i >= len(l.offered) {
		return u
	}
	seen := map[string]bool{}
	for _, name := range l.offered[i] {
		if seen[name] {
			u.skipped = append(u.skipped, skippedTool{name: name, twice: true})
			continue
		}
		seen[name] = true
		t, ok := l.set.Get(name)
		switch {
		case !ok:
			u.skipped = append(u.skipped, skippedTool{name: name, missing: true})
		case !t.IsLocal() && t.Origin == server:
			u.inUse = append(u.inUse, name)
		default:
			u.skipped = append(u.skipped, skippedTool{name: name, owner: t.Origin})
		}
	}
	return u
}

// count is /mcp's account of a server's tools: "2 tools", or with skipped
// ones "2 tools (1 skipped: name clash with local createTicket)".
func (u toolUse) count() string {
	n := len(u.inUse)
	s := fmt.Sprintf("%d %s", n, plural(n, "tool", "tools"))
	if sk := u.skippedText(); sk != "" {
		s += " (" + sk + ")"
	}
	return s
}

// skippedText says how many of the server's tools are skipped and why, as
// "1 skipped: name clash with local createTicket"; "" when none is.
func (u toolUse) skippedText() string {
	if len(u.skipped) == 0 {
		return ""
	}
	// One reason per kind of skip (and per server a clash is with), in
	// the order the kinds first occur, each naming its tools.
	type reason struct{ before, after string }
	var order []reason
	names := map[reason][]string{}
	for _, sk := range u.skipped {
		var r reason
		switch {
		case sk.twice:
			r.before = "offered more than once: "
		case sk.missing:
			r.before = "not in the tool table: "
		case sk.owner == "":
			r.before = "name clash with local "
		default:
			r = reason{"name clash with ", " from MCP server " + sk.owner}
		}
		if _, ok := names[r]; !ok {
			order = append(order, r)
		}
		names[r] = append(names[r], sk.name)
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = r.before + strings.Join(names[r], ", ") + r.after
	}
	return fmt.Sprintf("%d skipped: %s", len(u.skipped), strings.Join(parts, "; "))
}

// why says, for /tools, why a skipped tool of server is not in use.
func (sk skippedTool) why() string {
	switch {
	case sk.twice:
		return "the server offers more than one tool of that name and only the first is used"
	case sk.missing:
		return "the tool table has no tool of that name"
	case sk.owner == "":
		return "the local tool wins because " + guard.EnvMCPStrict + " is set"
	}
	return "MCP server " + sk.owner + "'s tool of that name is in use; set \"toolPrefix\" on one of them so both can be used"
}

// currentTools returns the table in use.
func (c *Chat) currentTools() *agent.ToolSet {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.live.set
}

// refreshTools brings the tool table up to date with the servers: any
// server whose tool list changed (a restart, or tools/list_changed) gets
// its new list merged in, and the change is reported on Err (tools added
// and removed, and any new clash). It returns the table to use; the agent
// loop calls it before each model call.
func (c *Chat) refreshTools(ctx context.Context) *agent.ToolSet {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	gens, err := generations(ctx, c.cfg.Servers)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(err.Error()))
	}
	if slices.Equal(gens, c.live.gens) {
		return c.live.set
	}
	next, err := buildLive(c.local, c.cfg.Servers, c.guards, c.live, gens)
	if err != nil {
		fmt.Fprintf(c.cfg.Err, "agentapp: warning: the tool table could not be refreshed, the previous one is kept: %s\n", textsafe.Escape(err.Error()))
		return c.live.set
	}
	for i, s := range c.cfg.Servers {
		added, removed := diffNames(c.live.names[i], next.names[i])
		if len(added)+len(removed) == 0 {
			continue
		}
		var parts []string
		if len(added) > 0 {
			parts = append(parts, "added "+strings.Join(added, ", "))
		}
		if len(removed) > 0 {
			parts = append(parts, "removed "+strings.Join(removed, ", "))
		}
		fmt.Fprintln(c.cfg.Err, textsafe.Escape(fmt.Sprintf("MCP server %s: tool list changed: %s", s.Name(), strings.Join(parts, "; "))))
	}
	for _, w := range next.report.Warnings {
		if !slices.Contains(c.live.report.Warnings, w) {
			fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(w))
		}
	}
	for _, w := range next.skipped {
		if !slices.Contains(c.live.skipped, w) {
			fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(w))
		}
	}
	c.live = next
	return next.set
}

// generations refreshes every supervised server's tool list (when it
// announced a change) and returns the lists' generations; the errors of
// failed re-listings are joined.
func generations(ctx context.Context, servers []Server) ([]uint64, error) {
	gens := make([]uint64, len(servers))
	var errs []error
	for i, s := range servers {
		sv, ok := s.(Supervised)
		if !ok {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		gen, err := sv.Refresh(rctx)
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
		gens[i] = gen
	}
	return gens, errors.Join(errs...)
}

// buildLive builds the table like BuildTools, except that a clash BuildTools
// refuses at start-up (two servers offering one name, or a server offering
// a name twice) cannot stop a running chat: the tool that was in the table
// before (or, when both are new, the one from the server listed first)
// stays, the newcomer is skipped, and a warning says so.
func buildLive(local []*agent.Tool, servers []Server, g *guard.Guards, prev liveTools, gens []uint64) (liveTools, error) {
	prevOwner := map[string]string{}
	if prev.set != nil {
		for _, t := range prev.set.Tools() {
			prevOwner[t.Name] = t.Origin
		}
	}
	next := liveTools{gens: gens, names: make([][]string, len(servers)), offered: make([][]string, len(servers))}
	offered := make([][]*agent.Tool, len(servers))
	owners := map[string][]int{} // tool name → servers offering it, in order
	for i, s := range servers {
		seen := map[string]bool{}
		for _, t := range s.Tools() {
			if t != nil && t.Name != "" {
				next.offered[i] = append(next.offered[i], t.Name)
			}
			if t == nil || t.Name == "" || seen[t.Name] {
				if t != nil && t.Name != "" {
					next.skipped = append(next.skipped, fmt.Sprintf("MCP server %q offers two tools named %q; the second is skipped", s.Name(), t.Name))
				}
				continue
			}
			seen[t.Name] = true
			offered[i] = append(offered[i], t)
			owners[t.Name] = append(owners[t.Name], i)
		}
	}
	keep := map[string]int{}
	for name, idx := range owners {
		winner := idx[0]
		for _, i := range idx {
			if prevOwner[name] == servers[i].Name() {
				winner = i
			}
		}
		keep[name] = winner
		for _, i := range idx {
			if i != winner {
				next.skipped = append(next.skipped, fmt.Sprintf("MCP servers %q and %q both offer a tool named %q now; %q's is kept and the newer one is skipped; set \"toolPrefix\" on one of them so both can be used",
					servers[winner].Name(), servers[i].Name(), name, servers[winner].Name()))
			}
		}
	}
	slices.Sort(next.skipped)
	lists := make([]serverTools, len(servers))
	for i, s := range servers {
		lists[i].server = s.Name()
		for _, t := range offered[i] {
			if keep[t.Name] != i {
				continue
			}
			lists[i].tools = append(lists[i].tools, t)
			next.names[i] = append(next.names[i], t.Name)
		}
	}
	set, report, err := guardAndMerge(local, lists, g)
	if err != nil {
		return liveTools{}, err
	}
	next.set, next.report = set, report
	return next, nil
}

// escapeLines escapes each line of s (textsafe) and keeps the line breaks:
// for a message of ours that spans lines on purpose.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}

// diffNames returns the names only in after (added) and only in before
// (removed), each in its list's order.
func diffNames(before, after []string) (added, removed []string) {
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	return added, removed
}

// toolUse returns what became of each server's tools in the table in use.
func (c *Chat) toolUse() []toolUse {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.toolUseLocked()
}

// toolUseLocked is toolUse with c.toolsMu held.
func (c *Chat) toolUseLocked() []toolUse {
	use := make([]toolUse, len(c.cfg.Servers))
	for i, s := range c.cfg.Servers {
		use[i] = c.live.use(i, s.Name())
	}
	return use
}

// printServers is /mcp: every server with its state and how many of its
// tools are in use. The count is read from the tool table, as /tools lists
// it, not from what the server offers: a tool skipped because of a name
// clash is counted apart, with the reason.
func (c *Chat) printServers(w io.Writer) {
	if len(c.cfg.Servers) == 0 && len(c.inactive) == 0 {
		fmt.Fprintln(w, "No MCP servers (add one with --mcp \"<command line>\" or --config FILE).")
		return
	}
	use := c.toolUse()
	n := len(c.cfg.Servers) + len(c.inactive)
	fmt.Fprintf(w, "%d MCP %s:\n", n, plural(n, "server", "servers"))
	defer c.printInactive(w, "  ")
	for i, s := range c.cfg.Servers {
		sv, ok := s.(Supervised)
		if !ok {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s: connected, %s", s.Name(), use[i].count())))
			continue
		}
		st := sv.Status()
		line := fmt.Sprintf("  %s: %s, %s", s.Name(), st.State, use[i].count())
		if st.Restarts > 0 {
			line += fmt.Sprintf(", %d automatic %s in the last minute", st.Restarts, plural(st.Restarts, "restart", "restarts"))
		}
		if st.Detail != "" {
			line += " (" + st.Detail + ")"
		}
		fmt.Fprintln(w, textsafe.Escape(line))
		if st.State == mcpclient.StateDown {
			fmt.Fprintf(w, "    restart it with /mcp restart %s\n", textsafe.Escape(s.Name()))
		}
	}
}

// restartServer is /mcp restart NAME. Ctrl-C cancels it.
func (c *Chat) restartServer(ctx context.Context, name string) {
	out := c.cfg.Out
	if name == "" {
		fmt.Fprintln(out, "Usage: /mcp restart NAME (see /mcp for the names)")
		return
	}
	var target Supervised
	var names []string
	index := -1
	for i, s := range c.cfg.Servers {
		names = append(names, s.Name())
		if sv, ok := s.(Supervised); ok && s.Name() == name {
			target, index = sv, i
		}
	}
	if target == nil {
		if len(names) == 0 {
			fmt.Fprintf(out, "No MCP server is named %s; no servers are connected.\n", textsafe.Escape(name))
		} else {
			fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("No MCP server is named %s; the servers are: %s.", name, strings.Join(names, ", "))))
		}
		return
	}
	ctx, stop := c.interruptible(ctx)
	defer stop()
	fmt.Fprintf(out, "Restarting MCP server %s…\n", textsafe.Escape(name))
	if err := target.Restart(ctx); err != nil {
		// The error may span lines (the server's last stderr lines, each
		// escaped by the bridge); each line is escaped again here.
		fmt.Fprintf(c.cfg.Err, "agentapp: error: restarting MCP server %s failed: %s\n", textsafe.Escape(name), escapeLines(err.Error()))
		return
	}
	c.refreshTools(ctx)
	st := target.Status()
	fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s: %s, %s", name, st.State, c.toolUse()[index].count())))
}
