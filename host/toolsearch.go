package host

import (
	"container/list"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/toolsearch"
)

// ToolSearchOptions say when the MCP tools are deferred behind
// searchTools. A nil *ToolSearchOptions, or a zero field, means the
// default.
type ToolSearchOptions struct {
	// Mode is auto (the default: defer when the MCP tool definitions take
	// more than a tenth of the window or number more than 40), on or off.
	Mode toolsearch.Mode
	// Window is the model's context window in tokens; 0 looks the model
	// up by name (budget.LookupModel).
	Window int
	// Defer are auto mode's thresholds.
	Defer *toolsearch.DeferOptions
}

// maxLoadedPerSession bounds the tools a session keeps loaded; past it the
// ones loaded first are dropped.
const maxLoadedPerSession = 64

// maxLoadedSessions bounds the sessions whose loaded tools are kept in
// memory; the database keeps them all.
const maxLoadedSessions = 10_000

// loadedMaxAge is how long a session's loaded tools are kept: a session
// resumed later searches again. It bounds the table for conversations
// that are never resumed (each /v1 request is one).
const loadedMaxAge = 30 * 24 * time.Hour

// loadedPruneEvery spaces the deletions of loaded tools past loadedMaxAge.
const loadedPruneEvery = 10 * time.Minute

// searchMigrations are the steps of the host's "toolsearch" component:
// the tools each session has loaded, so a resumed session keeps them.
var searchMigrations = []string{
	`CREATE TABLE tool_search_loaded (
		session TEXT NOT NULL, name TEXT NOT NULL, server TEXT NOT NULL, loaded TEXT NOT NULL,
		PRIMARY KEY (session, name))`,
}

// searchParts defer the MCP tools when they are too many or too large,
// and keep the tools each session found.
type searchParts struct {
	opts   ToolSearchOptions
	window int
	est    *budget.Estimator
	st     *store.Store // nil keeps loaded tools in memory only
	log    *slog.Logger
	now    func() time.Time
	tool   *agent.Tool
	// readLoaded reads a session's loaded tools from the database
	// (readLoadedDB); a field, so that a test can make it slow.
	readLoaded func(ctx context.Context, session string) ([]string, error)
	// local are the names of the host's local tools. A server's tool of
	// one of these names replaced a local tool (merge) and is offered
	// always, as the local tool was: the user plugged the server in to
	// answer those questions, and the banner lists the tool as offered.
	local map[string]bool

	// mu guards the fields below and is never held across a database
	// query: offered takes it before every model call of every session.
	mu     sync.Mutex
	forSet *agent.ToolSet // the table the fields below were built for
	// decision, index and deferred are replaced, never changed in place,
	// so a copy taken under mu may be read after it is released.
	decision toolsearch.Decision
	index    *toolsearch.Index
	deferred map[string]bool
	loaded   *loadedCache // session → loaded names, oldest first
	pruned   time.Time    // when old loaded tools were last deleted
}

func newSearchParts(ctx context.Context, cfg *config, log *slog.Logger) (*searchParts, error) {
	var o ToolSearchOptions
	if cfg.ToolSearch != nil {
		o = *cfg.ToolSearch
	}
	mode, err := toolsearch.ParseMode(string(o.Mode))
	if err != nil {
		return nil, err
	}
	o.Mode = mode
	info := budget.LookupModel(cfg.Model.Name())
	s := &searchParts{opts: o, window: budget.Window(cfg.Model.Name(), o.Window), est: budget.NewEstimator(info.Family),
		st: cfg.Store, log: log, now: cfg.Now, loaded: newLoadedCache(maxLoadedSessions), local: map[string]bool{}}
	s.readLoaded = s.readLoadedDB
	for _, t := range cfg.Local {
		if t != nil {
			s.local[t.Name] = true
		}
	}
	if s.st != nil {
		if err := s.st.Migrate(ctx, "toolsearch", searchMigrations); err != nil {
			return nil, fmt.Errorf("opening the table of loaded tools: %w", err)
		}
	}
	s.tool = toolsearch.NewSearchTool(&toolsearch.ToolOptions{
		Index:  s.currentIndex,
		OnLoad: func(ctx context.Context, found []toolsearch.Entry) { s.load(ctx, agent.SessionFrom(ctx), found) },
	})
	return s, nil
}

// deferrable reports whether t is an MCP server's tool that does not take
// a local tool's place (the local tools, the server tools that replaced
// one, and the host's resource and skill tools are always offered; the
// skills have a deferral of their own, skills.go).
func (s *searchParts) deferrable(t *agent.Tool) bool {
	return !t.IsLocal() && t.Origin != ResourceToolOrigin && t.Origin != SkillToolOrigin && !s.local[t.Name]
}

// updateLocked decides again for a new table (s.mu held).
func (s *searchParts) updateLocked(table *agent.ToolSet) {
	if table == s.forSet && s.forSet != nil {
		return
	}
	s.forSet = table
	var specs []model.ToolSpec
	var entries []toolsearch.Entry
	for _, t := range table.Tools() {
		if !s.deferrable(t) {
			continue
		}
		specs = append(specs, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
		entries = append(entries, toolsearch.EntryOf(t))
	}
	s.decision = toolsearch.Decide(s.opts.Mode, s.est.Tools(specs), len(specs), s.window, s.opts.Defer)
	s.index, s.deferred = nil, nil
	if !s.decision.Defer {
		return
	}
	ix, err := toolsearch.NewIndex(entries)
	if err != nil {
		// Too many tools to index: offering them all would not fit
		// either; the model gets the local ones and the error on search.
		s.log.Warn("tool search: " + err.Error())
		ix, _ = toolsearch.NewIndex(nil)
	}
	s.index = ix
	s.deferred = make(map[string]bool, len(entries))
	for _, e := range entries {
		s.deferred[e.Name] = true
	}
}

func (s *searchParts) currentIndex() *toolsearch.Index {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.index
}

// loadedNames returns the names session has loaded, reading them from
// the database the first time. The query runs without s.mu, so one
// session waiting on the database holds up no other session's model call;
// two first reads of one session may both query, and the first to finish
// fills the cache.
func (s *searchParts) loadedNames(ctx context.Context, session string) []string {
	s.mu.Lock()
	names, ok := s.loaded.get(session)
	s.mu.Unlock()
	if ok {
		return names
	}
	if s.st != nil && session != "" {
		var err error
		if names, err = s.readLoaded(ctx, session); err != nil {
			s.log.Warn("tool search: reading the session's loaded tools: " + err.Error())
			return nil // not cached: asked again next time
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.loaded.get(session); ok {
		return cur // a search of the session (load) or another read was first
	}
	s.loaded.put(session, names)
	return names
}

// readLoadedDB reads session's loaded tools from the database, oldest
// first, bounded by storeTimeout.
func (s *searchParts) readLoadedDB(ctx context.Context, session string) ([]string, error) {
	qctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	rows, err := s.st.DB.QueryContext(qctx, `SELECT name FROM tool_search_loaded WHERE session = ? ORDER BY loaded, name`, session)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if rows.Scan(&n) == nil {
			names = append(names, n)
		}
	}
	return names, rows.Err()
}

// loadedCache keeps the loaded tools of the sessions used last, at most
// max of them: past it the session used least recently is dropped (and
// read again from the database when it comes back), one at a time, so a
// full cache does not send every session to the database at once.
type loadedCache struct {
	max   int
	order *list.List // of *loadedEntry, the most recently used first
	by    map[string]*list.Element
}

type loadedEntry struct {
	session string
	names   []string
}

func newLoadedCache(max int) *loadedCache {
	return &loadedCache{max: max, order: list.New(), by: map[string]*list.Element{}}
}

// get returns session's names and marks the session used.
func (c *loadedCache) get(session string) ([]string, bool) {
	e, ok := c.by[session]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*loadedEntry).names, true
}

// put sets session's names, marks it used and drops the least recently
// used session when there are more than max.
func (c *loadedCache) put(session string, names []string) {
	if e, ok := c.by[session]; ok {
		e.Value.(*loadedEntry).names = names
		c.order.MoveToFront(e)
		return
	}
	c.by[session] = c.order.PushFront(&loadedEntry{session: session, names: names})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.by, last.Value.(*loadedEntry).session)
	}
}

func (c *loadedCache) len() int { return c.order.Len() }

// load adds what a search found to session's loaded tools, in memory and
// in the database.
func (s *searchParts) load(ctx context.Context, session string, found []toolsearch.Entry) {
	base := s.loadedNames(ctx, session)
	s.mu.Lock()
	if cur, ok := s.loaded.get(session); ok {
		base = cur // what another search of the session added meanwhile
	}
	names := slices.Clone(base)
	var added []toolsearch.Entry
	for _, e := range found {
		if !slices.Contains(names, e.Name) {
			names = append(names, e.Name)
			added = append(added, e)
		}
	}
	if len(names) > maxLoadedPerSession {
		names = names[len(names)-maxLoadedPerSession:]
	}
	s.loaded.put(session, names)
	s.mu.Unlock()
	if s.st == nil || session == "" || len(added) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	now := s.now()
	s.mu.Lock()
	prune := now.Sub(s.pruned) >= loadedPruneEvery
	if prune {
		s.pruned = now
	}
	s.mu.Unlock()
	stamp := loadedStamp(now)
	err := s.st.Tx(sctx, func(tx *sql.Tx) error {
		if prune {
			if _, err := tx.ExecContext(sctx, `DELETE FROM tool_search_loaded WHERE loaded < ?`, loadedStamp(now.Add(-loadedMaxAge))); err != nil {
				return err
			}
		}
		for _, e := range added {
			if _, err := tx.ExecContext(sctx, `INSERT INTO tool_search_loaded (session, name, server, loaded) VALUES (?, ?, ?, ?) ON CONFLICT (session, name) DO NOTHING`,
				session, e.Name, e.Server, stamp); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(sctx, `DELETE FROM tool_search_loaded WHERE session = ? AND name NOT IN
			(SELECT name FROM tool_search_loaded WHERE session = ? ORDER BY loaded DESC, name LIMIT ?)`, session, session, maxLoadedPerSession)
		return err
	})
	if err != nil {
		s.log.Warn("tool search: the loaded tools are kept for this run only: " + err.Error())
	}
}

// loadedStamp formats a time so that text order is time order.
func loadedStamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// ToolSearchState is what /tools shows of the tool search for a session.
type ToolSearchState struct {
	// Deferred reports that the MCP tools are behind searchTools, and
	// Reason says why (or why not).
	Deferred bool
	Reason   string
	// Loaded are the deferred tools the session has loaded; Waiting are
	// the ones it has not.
	Loaded, Waiting []string
}

// ToolSearch returns the tool search's state for session, over the
// current tool table.
func (h *Host) ToolSearch(ctx context.Context, session string) ToolSearchState {
	s := h.search
	s.mu.Lock()
	s.updateLocked(h.table.Current())
	set, decision, deferred := s.forSet, s.decision, s.deferred
	s.mu.Unlock()
	st := ToolSearchState{Deferred: decision.Defer, Reason: decision.Reason}
	if !st.Deferred {
		return st
	}
	loaded := s.loadedNames(ctx, session)
	for _, t := range set.Tools() {
		if !deferred[t.Name] {
			continue
		}
		if slices.Contains(loaded, t.Name) {
			st.Loaded = append(st.Loaded, t.Name)
		} else {
			st.Waiting = append(st.Waiting, t.Name)
		}
	}
	return st
}

// offered returns the tools the model is offered in session over table:
// every tool cut to its result cap; with tool search deferring, the local
// tools, searchTools and the tools the session loaded; readToolResult once
// the session has a stored result.
func (h *Host) offered(ctx context.Context, session string, table *agent.ToolSet) *agent.ToolSet {
	// Asked before s.mu is taken: it may ask the database.
	hasCut := h.results.sessionHasCut(ctx, session)
	s := h.search
	s.mu.Lock()
	s.updateLocked(table)
	decision, deferred := s.decision, s.deferred
	s.mu.Unlock()
	var loaded []string
	if decision.Defer {
		loaded = s.loadedNames(ctx, session)
	}
	tools := make([]*agent.Tool, 0, table.Len()+2)
	for _, t := range table.Tools() {
		if deferred[t.Name] && !slices.Contains(loaded, t.Name) {
			continue
		}
		tools = append(tools, h.hookedTool(h.wrapped(table, t)))
	}
	if decision.Defer {
		if _, taken := table.Get(toolsearch.SearchToolName); !taken {
			tools = append(tools, s.tool)
		}
	}
	if _, taken := table.Get(h.results.readTool.Name); !taken && hasCut {
		tools = append(tools, h.results.readTool)
	}
	set, err := agent.NewToolSet(tools...)
	if err != nil { // cannot happen: the names come from a set
		h.log.Warn("tool table: " + err.Error())
		return table
	}
	return set
}

// loadCalled lets a model call a deferred tool it has not searched for by
// the tool's exact name or its server-prefixed name (github__create_issue):
// the tool is loaded for the session, as a search for that name would have
// loaded it, and the call runs. The alternative, an error telling the
// model to call searchTools with the name first, costs a whole extra model
// round trip to reach the same state, and a model that names a tool
// exactly has usually seen it (an earlier turn of a resumed session, the
// user, the server's instructions). The call gains no rights by skipping
// the search: the tool added is the table's own, wrapped with the guards,
// approvals and result cap of any call. A model that guessed the arguments
// wrong gets the server's error, and the tool's schema is in its next
// request.
//
// It runs on the reply, before the engine runs the calls: the engine runs
// them against the turn's tool set, which offered built for this turn
// alone, so the tool is added to that set, and a server-prefixed call is
// renamed to the name the tool is called by, so that the history and the
// events show the tool that ran.
func (h *Host) loadCalled(ctx context.Context, session string, rt *running, r *model.Response) *model.Response {
	if r == nil || len(r.Message.ToolCalls) == 0 {
		return r
	}
	set := rt.tools()
	s := h.search
	type call struct {
		i    int
		tool *agent.Tool
	}
	var resolved []call
	var found []toolsearch.Entry
	s.mu.Lock()
	table := s.forSet
	if s.decision.Defer && s.index != nil && set != table {
		for i, c := range r.Message.ToolCalls {
			if _, ok := set.Get(c.Name); ok {
				continue
			}
			e, ok := s.index.Lookup(c.Name)
			if !ok || !s.deferred[e.Name] {
				continue
			}
			t, ok := table.Get(e.Name)
			if !ok {
				continue
			}
			resolved = append(resolved, call{i, t})
			found = append(found, e)
		}
	}
	s.mu.Unlock()
	if len(resolved) == 0 {
		return r
	}
	s.load(ctx, session, found)
	out := *r
	out.Message.ToolCalls = slices.Clone(r.Message.ToolCalls)
	rt.mu.Lock()
	for _, c := range resolved {
		if _, ok := set.Get(c.tool.Name); !ok {
			if err := set.Add(h.wrapped(table, c.tool)); err != nil { // cannot happen: checked above
				h.log.Warn("tool search: " + err.Error())
				continue
			}
		}
		if name := out.Message.ToolCalls[c.i].Name; name != c.tool.Name {
			h.log.Debug("tool search: a call of "+name+" runs "+c.tool.Name, "server", c.tool.Origin)
		}
		out.Message.ToolCalls[c.i].Name = c.tool.Name
	}
	rt.mu.Unlock()
	return &out
}

// cutDescription returns t, or a copy of it whose description is cut to
// toolsearch.MaxTextBytes with a warning naming the server added to
// warnings: every request carries the descriptions, so one server may not
// spend the context on one tool's essay. The server's own tool is left as
// it is.
func cutDescription(t *agent.Tool, warnings *[]string) *agent.Tool {
	d, w := toolsearch.CutText(t.Origin, "the description of tool "+t.Name, t.Description)
	if w == "" {
		return t
	}
	*warnings = append(*warnings, w)
	c := copyTool(t)
	c.Description = d
	return c
}

// capSchema returns t, a copy of it with its input schema reduced
// (toolsearch.CapSchema), or nil when the tool is to be left out; a
// warning naming the server goes to warnings whenever the schema was over
// the bound. A session that loaded a tool with a megabyte schema could not
// send another request, not even "hello".
func capSchema(t *agent.Tool, warnings *[]string) *agent.Tool {
	s, w, keep := toolsearch.CapSchema(t.Origin, t.Name, t.InputSchema)
	if w == "" {
		return t
	}
	*warnings = append(*warnings, w)
	if !keep {
		return nil
	}
	c := copyTool(t)
	c.InputSchema = s
	return c
}

// unload removes names from session's loaded tools, in memory and in the
// database, and returns those that were loaded. The database is written
// even when ctx has ended: an unload that did not stick would come back
// with the session.
func (s *searchParts) unload(ctx context.Context, session string, names []string) []string {
	s.loadedNames(ctx, session) // fills the cache from the database first
	s.mu.Lock()
	loaded, _ := s.loaded.get(session)
	var gone []string
	kept := make([]string, 0, len(loaded))
	for _, n := range loaded {
		if slices.Contains(names, n) {
			gone = append(gone, n)
		} else {
			kept = append(kept, n)
		}
	}
	s.loaded.put(session, kept)
	s.mu.Unlock()
	if s.st == nil || session == "" || len(gone) == 0 {
		return gone
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	err := s.st.Tx(sctx, func(tx *sql.Tx) error {
		for _, n := range gone {
			if _, err := tx.ExecContext(sctx, `DELETE FROM tool_search_loaded WHERE session = ? AND name = ?`, session, n); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.log.Warn("tool search: the unloaded tools stay unloaded for this run only: " + err.Error())
	}
	return gone
}

// dropTurnLoads unloads what session loaded since before was read: the
// loads of a turn that failed are not kept, so a tool that made the turn
// fail is not offered again by every later request.
func (s *searchParts) dropTurnLoads(ctx context.Context, session string, before []string) []string {
	var added []string
	for _, n := range s.loadedNames(ctx, session) {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return s.unload(ctx, session, added)
}

// ErrNotLoaded is UnloadTool's error for a tool the session has not loaded.
var ErrNotLoaded = errors.New("the tool is not loaded in this session")

// UnloadTool removes name from the tools session loaded through
// searchTools: later requests no longer offer it (a search loads it
// again).
func (h *Host) UnloadTool(ctx context.Context, session, name string) error {
	if gone := h.search.unload(ctx, session, []string{name}); len(gone) == 0 {
		loaded := h.search.loadedNames(ctx, session)
		if len(loaded) == 0 {
			return fmt.Errorf("%w: %q (no tool is loaded)", ErrNotLoaded, name)
		}
		return fmt.Errorf("%w: %q (loaded: %s)", ErrNotLoaded, name, strings.Join(loaded, ", "))
	}
	return nil
}
