package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
)

// refreshTimeout bounds the re-listing of one server's tools before a
// model call.
const refreshTimeout = 10 * time.Second

// Notice is something the tool table reports while the host runs: a clash
// warning, or a server's tool list that changed. Front ends show it their
// way (the terminal on stderr, the web in its log).
type Notice struct {
	// Warning is set for a warning (a clash, a failed refresh); a change
	// of a tool list is not one.
	Warning bool
	Text    string
}

// Table is the live tool table of a host: the local tools merged with the
// tools of every running MCP server, guarded, and rebuilt when a server's
// tool list changes (a restart, notifications/tools/list_changed), when a
// server is enabled or disabled.
//
// One clash policy holds for the whole life of the table: at the start and
// at every rebuild, a name offered by two servers keeps the tool that was in
// the table before (or, when both are new, the one from the server listed
// first) and skips the other with a warning; a name a server offers twice
// keeps the first. A clash that appears mid-session never freezes the table.
type Table struct {
	guards  *guard.Guards
	notify  func(Notice)
	connect func(ctx context.Context, name string) (Server, error)
	hints   Hints

	mu       sync.Mutex
	local    []*agent.Tool
	servers  []Server
	inactive []Inactive
	live     liveTools
	resTools []*agent.Tool // listMcpResources, readMcpResource
	skills   skillSet      // skills.go
}

// liveTools is the table and what it was built from.
type liveTools struct {
	set     *agent.ToolSet
	report  MergeReport
	gens    []uint64   // per server: the generation the table was built from
	names   [][]string // per server: its tool names in the table's build
	offered [][]string // per server: the names it offered, duplicates included
	skipped []string   // clash warnings of this build
}

// newTable builds the first table. A clash between local tools, or a
// server tool without an origin, is an error.
func newTable(ctx context.Context, local []*agent.Tool, servers []Server, inactive []Inactive, g *guard.Guards, notify func(Notice), connect func(context.Context, string) (Server, error), hints Hints) (*Table, error) {
	t := &Table{guards: g, notify: notify, connect: connect, hints: hints, local: local, servers: slices.Clone(servers), inactive: slices.Clone(inactive)}
	t.resTools = resourceTools(t, g)
	t.syncSkills(ctx, t.servers)
	// Generations first: tools read after them are at least as new.
	gens, err := generations(ctx, t.servers)
	if err != nil {
		return nil, err
	}
	set, report, err := guardAndMerge(t.toolsLocked(), serverLists(t.servers), g, hints)
	if err != nil {
		return nil, err
	}
	for _, w := range report.Warnings {
		t.warn(w)
	}
	t.live = liveTools{set: set, report: report, gens: gens, names: make([][]string, len(t.servers))}
	for i, s := range t.servers {
		t.live.names[i] = namedTools(s.Tools())
	}
	t.live.offered = t.live.names
	return t, nil
}

// namedTools returns the names of the tools that have one, which are the
// tools a table can hold (merge skips the others).
func namedTools(tools []*agent.Tool) []string {
	var names []string
	for _, t := range tools {
		if t != nil && t.Name != "" {
			names = append(names, t.Name)
		}
	}
	return names
}

func (t *Table) warn(text string) {
	if t.notify != nil {
		t.notify(Notice{Warning: true, Text: text})
	}
}

// tools is the local tools plus the resource tools when a running server
// offers resources (t.mu held).
func (t *Table) toolsLocked() []*agent.Tool {
	tools := t.local
	if len(catalogsOf(t.servers, false)) > 0 {
		tools = append(slices.Clone(tools), t.resTools...)
	}
	if st := t.skillTools(); len(st) > 0 {
		tools = append(slices.Clone(tools), st...)
	}
	return tools
}

// build builds the next table from the servers' tool lists (t.mu held).
func (t *Table) build(gens []uint64, prev liveTools) (liveTools, error) {
	return buildLive(t.toolsLocked(), t.servers, t.guards, t.hints, prev, gens)
}

// Current returns the table in use, without refreshing it.
func (t *Table) Current() *agent.ToolSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live.set
}

// Report says which local and MCP tools clashed in the current table.
func (t *Table) Report() MergeReport {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live.report
}

// Local returns the local tools the host was given (the resource tools
// are not among them).
func (t *Table) Local() []*agent.Tool { return t.local }

// Servers returns the running servers, in order.
func (t *Table) Servers() []Server {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.servers)
}

// Inactive returns the configured servers that are not running, in the
// order of the config.
func (t *Table) Inactive() []Inactive {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.inactive)
}

// Refresh brings the table up to date with the servers: any server whose
// tool list changed gets its new list merged in, and the change is
// notified (tools added and removed, any new clash). It returns the table
// to use; the turn runner calls it before each model call. A rebuild that
// fails keeps the previous table, with a warning.
func (t *Table) Refresh(ctx context.Context) *agent.ToolSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	gens, err := generations(ctx, t.servers)
	if err != nil {
		t.warn(err.Error())
	}
	if !t.syncSkills(ctx, t.servers) && slices.Equal(gens, t.live.gens) {
		return t.live.set
	}
	next, err := t.build(gens, t.live)
	if err != nil {
		t.warn("the tool table could not be refreshed, the previous one is kept: " + err.Error())
		return t.live.set
	}
	for i, s := range t.servers {
		var before []string
		if i < len(t.live.names) {
			before = t.live.names[i]
		}
		added, removed := diffNames(before, next.names[i])
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
		if t.notify != nil {
			t.notify(Notice{Text: fmt.Sprintf("MCP server %s: tool list changed: %s", s.Name(), strings.Join(parts, "; "))})
		}
	}
	t.adopt(next)
	return next.set
}

// adopt makes next the table, warning of what is new in it (t.mu held).
func (t *Table) adopt(next liveTools) {
	for _, w := range next.report.Warnings {
		if !slices.Contains(t.live.report.Warnings, w) {
			t.warn(w)
		}
	}
	for _, w := range next.skipped {
		if !slices.Contains(t.live.skipped, w) {
			t.warn(w)
		}
	}
	t.live = next
}

// rebuildLocked builds the table again after the set of running servers
// changed (t.mu held).
func (t *Table) rebuildLocked(ctx context.Context) {
	t.syncSkills(ctx, t.servers)
	gens, err := generations(ctx, t.servers)
	if err != nil {
		t.warn(err.Error())
	}
	next, err := t.build(gens, liveTools{set: t.live.set})
	if err != nil {
		t.warn("the tool table could not be rebuilt, the previous one is kept: " + err.Error())
		return
	}
	t.adopt(next)
}

// errUnknownServer is wrapped by the errors for a name no configured
// server has.
var errUnknownServer = errors.New("no MCP server of that name")

// Disable stops the running server called name for the rest of the
// host's life: its tools leave the table and it is listed as disabled. The
// error of its Close is returned apart (closeErr), since the server is
// disabled either way.
func (t *Table) Disable(ctx context.Context, name string) (closeErr, err error) {
	t.mu.Lock()
	i := indexOf(t.servers, name)
	if i < 0 {
		t.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", errUnknownServer, name)
	}
	s := t.servers[i]
	t.servers = slices.Delete(slices.Clone(t.servers), i, i+1)
	t.inactive = append(slices.Clone(t.inactive), Inactive{Name: name, Disabled: true})
	t.rebuildLocked(ctx)
	t.mu.Unlock()
	return s.Close(), nil
}

// ErrCannotConnect is returned by Enable when the host was given no way to
// connect a server.
var ErrCannotConnect = errors.New("this host cannot start MCP servers")

// Enable connects the inactive server called name and merges its tools
// in; it returns what became of its tools. A failed connection keeps the
// server inactive, with the new reason.
func (t *Table) Enable(ctx context.Context, name string) (ToolUse, error) {
	t.mu.Lock()
	j := slices.IndexFunc(t.inactive, func(in Inactive) bool { return in.Name == name })
	t.mu.Unlock()
	if j < 0 {
		return ToolUse{}, fmt.Errorf("%w: %s", errUnknownServer, name)
	}
	if t.connect == nil {
		return ToolUse{}, ErrCannotConnect
	}
	s, err := t.connect(ctx, name)
	t.mu.Lock()
	defer t.mu.Unlock()
	k := slices.IndexFunc(t.inactive, func(in Inactive) bool { return in.Name == name })
	if err != nil {
		if k >= 0 {
			t.inactive = slices.Clone(t.inactive)
			t.inactive[k] = Inactive{Name: name, Err: err}
		}
		return ToolUse{}, err
	}
	if k >= 0 {
		t.inactive = slices.Delete(slices.Clone(t.inactive), k, k+1)
	}
	t.servers = append(slices.Clone(t.servers), s)
	t.rebuildLocked(ctx)
	return t.live.use(t.hints, len(t.servers)-1, s.Name()), nil
}

// Restart restarts the running supervised server called name and merges
// its tools again.
func (t *Table) Restart(ctx context.Context, name string) (ToolUse, error) {
	t.mu.Lock()
	i := indexOf(t.servers, name)
	var sv Supervised
	if i >= 0 {
		sv, _ = t.servers[i].(Supervised)
	}
	t.mu.Unlock()
	if sv == nil {
		return ToolUse{}, fmt.Errorf("%w: %s", errUnknownServer, name)
	}
	if err := sv.Restart(ctx); err != nil {
		return ToolUse{}, err
	}
	t.Refresh(ctx)
	t.mu.Lock()
	defer t.mu.Unlock()
	if i = indexOf(t.servers, name); i < 0 {
		return ToolUse{}, nil
	}
	return t.live.use(t.hints, i, name), nil
}

// Use returns what became of each running server's tools in the table.
func (t *Table) Use() []ToolUse {
	t.mu.Lock()
	defer t.mu.Unlock()
	use := make([]ToolUse, len(t.servers))
	for i, s := range t.servers {
		use[i] = t.live.use(t.hints, i, s.Name())
	}
	return use
}

// close closes every running server (closeServers).
func (t *Table) close() error {
	t.mu.Lock()
	servers := t.servers
	t.mu.Unlock()
	return closeServers(servers)
}

// OriginOf is the server a tool of set comes from, "local" for a tool of
// this process and "" for a name set does not have.
func OriginOf(set *agent.ToolSet, name string) string {
	tool, ok := set.Get(name)
	switch {
	case !ok:
		return ""
	case tool.IsLocal():
		return "local"
	}
	return tool.Origin
}

// ToolUse is what became of one server's tools in the table, read from the
// table itself: the counts and the lists of a front end agree.
type ToolUse struct {
	InUse   []string
	Skipped []SkippedTool // in the server's order
}

// SkippedTool is a tool a server offers that the table does not take
// from it.
type SkippedTool struct {
	Name string
	// Owner has the name in the table: "" for a local tool, else the MCP
	// server whose tool is kept.
	Owner string
	// Twice: the server offered the name more than once (only the first
	// can be in use); Missing: the table has no tool of that name.
	Twice, Missing bool
	// because names the setting that made a local tool win (Hints).
	because string
}

// use reads from the table which of the tools server offered for this
// build are in use and why the others are not.
func (l *liveTools) use(hints Hints, i int, server string) ToolUse {
	var u ToolUse
	if l.set == nil || i >= len(l.offered) {
		return u
	}
	seen := map[string]bool{}
	for _, name := range l.offered[i] {
		if seen[name] {
			u.Skipped = append(u.Skipped, SkippedTool{Name: name, Twice: true})
			continue
		}
		seen[name] = true
		t, ok := l.set.Get(name)
		switch {
		case !ok:
			u.Skipped = append(u.Skipped, SkippedTool{Name: name, Missing: true})
		case !t.IsLocal() && t.Origin == server:
			u.InUse = append(u.InUse, name)
		default:
			u.Skipped = append(u.Skipped, SkippedTool{Name: name, Owner: t.Origin, because: hints.LocalToolsWin})
		}
	}
	return u
}

// Count is a server's account of its tools: "2 tools", or with skipped
// ones "2 tools (1 skipped: name clash with local createTicket)".
func (u ToolUse) Count() string {
	n := len(u.InUse)
	s := fmt.Sprintf("%d %s", n, plural(n, "tool", "tools"))
	if sk := u.SkippedText(); sk != "" {
		s += " (" + sk + ")"
	}
	return s
}

// SkippedText says how many of the server's tools are skipped and why, as
// "1 skipped: name clash with local createTicket"; "" when none is.
func (u ToolUse) SkippedText() string {
	if len(u.Skipped) == 0 {
		return ""
	}
	// One reason per kind of skip (and per server a clash is with), in
	// the order the kinds first occur, each naming its tools.
	type reason struct{ before, after string }
	var order []reason
	names := map[reason][]string{}
	for _, sk := range u.Skipped {
		var r reason
		switch {
		case sk.Twice:
			r.before = "offered more than once: "
		case sk.Missing:
			r.before = "not in the tool table: "
		case sk.Owner == "":
			r.before = "name clash with local "
		default:
			r = reason{"name clash with ", " from MCP server " + sk.Owner}
		}
		if _, ok := names[r]; !ok {
			order = append(order, r)
		}
		names[r] = append(names[r], sk.Name)
	}
	parts := make([]string, len(order))
	for i, r := range order {
		parts[i] = r.before + strings.Join(names[r], ", ") + r.after
	}
	return fmt.Sprintf("%d skipped: %s", len(u.Skipped), strings.Join(parts, "; "))
}

// Why says why a skipped tool is not in use.
func (sk SkippedTool) Why() string {
	switch {
	case sk.Twice:
		return "the server offers more than one tool of that name and only the first is used"
	case sk.Missing:
		return "the tool table has no tool of that name"
	case sk.Owner == "":
		if sk.because != "" {
			return "the local tool wins because " + sk.because
		}
		return "the local tool of that name is in use (local tools win name clashes)"
	}
	return "MCP server " + sk.Owner + "'s tool of that name is in use; set \"toolPrefix\" on one of them so both can be used"
}

// generations refreshes every supervised server's tool list (when it
// announced a change) and returns the lists' generations; the errors of
// failed re-listings are joined.
func generations(ctx context.Context, servers []Server) ([]uint64, error) {
	gens := make([]uint64, len(servers))
	errs := make([]error, len(servers))
	// All at once: a server whose list's caching hint ran out (protocol
	// 2026-07-28, ttlMs 0: every time) is listed again before each model
	// call, and the servers' round trips should not add up.
	var wg sync.WaitGroup
	for i, s := range servers {
		sv, ok := s.(Supervised)
		if !ok {
			continue
		}
		wg.Go(func() {
			rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
			defer cancel()
			gens[i], errs[i] = sv.Refresh(rctx)
		})
	}
	wg.Wait()
	return gens, errors.Join(errs...)
}

// buildLive builds the table from the servers' current lists. A clash
// between servers (two servers offering one name, or a server offering a
// name twice) cannot stop a running host: the tool that was in the table
// before (or, when both are new, the one from the server listed first)
// stays, the newcomer is skipped, and a warning says so.
func buildLive(local []*agent.Tool, servers []Server, g *guard.Guards, hints Hints, prev liveTools, gens []uint64) (liveTools, error) {
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
			if len(modelTools(s, []*agent.Tool{t})) == 0 {
				continue // a view's tool only (apps.go)
			}
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
			if i == winner {
				continue
			}
			next.skipped = append(next.skipped, fmt.Sprintf("MCP servers %q and %q both offer a tool named %q now; %q's is kept and the newer one is skipped; set \"toolPrefix\" on one of them so both can be used",
				servers[winner].Name(), servers[i].Name(), name, servers[winner].Name()))
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
	set, report, err := guardAndMerge(local, lists, g, hints)
	if err != nil {
		return liveTools{}, err
	}
	next.set, next.report = set, report
	return next, nil
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
