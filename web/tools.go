package web

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/guard"
)

// refreshTimeout bounds the re-listing of one server's tools before a
// model call.
const refreshTimeout = 10 * time.Second

// toolTable is the merged tool table of every turn, rebuilt (with
// chat.BuildTools, so it is merged and guarded exactly as the chat's) when
// a supervised server's tool list changed: a restart, or
// tools/list_changed.
type toolTable struct {
	local   []*agent.Tool
	servers []chat.Server
	guards  *guard.Guards
	log     *slog.Logger

	mu   sync.Mutex
	set  *agent.ToolSet
	gens []uint64
}

func newToolTable(ctx context.Context, local []*agent.Tool, servers []chat.Server, g *guard.Guards, log *slog.Logger) (*toolTable, error) {
	t := &toolTable{local: local, servers: servers, guards: g, log: log}
	t.gens = t.generations(ctx)
	set, report, err := chat.BuildTools(local, servers, g)
	if err != nil {
		return nil, err
	}
	for _, w := range report.Warnings {
		log.Warn(w)
	}
	t.set = set
	return t, nil
}

// generations refreshes each supervised server's list (when it announced
// a change) and returns the lists' generations.
func (t *toolTable) generations(ctx context.Context) []uint64 {
	gens := make([]uint64, len(t.servers))
	for i, s := range t.servers {
		sv, ok := s.(chat.Supervised)
		if !ok {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		gen, err := sv.Refresh(rctx)
		cancel()
		if err != nil {
			t.log.Warn("cannot refresh the tools of MCP server " + s.Name() + ": " + err.Error())
		}
		gens[i] = gen
	}
	return gens
}

// current returns the table to use now, rebuilt first if a server's tool
// list changed. A rebuild that fails keeps the previous table.
func (t *toolTable) current(ctx context.Context) *agent.ToolSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.servers) == 0 {
		return t.set
	}
	gens := t.generations(ctx)
	if slices.Equal(gens, t.gens) {
		return t.set
	}
	set, report, err := chat.BuildTools(t.local, t.servers, t.guards)
	if err != nil {
		t.log.Warn("the tool table could not be refreshed, the previous one is kept: " + err.Error())
		return t.set
	}
	for _, w := range report.Warnings {
		t.log.Warn(w)
	}
	t.set, t.gens = set, gens
	return set
}

// snapshot returns the table without refreshing it.
func (t *toolTable) snapshot() *agent.ToolSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.set
}

// originOf is the server a tool of the table comes from, "local" for a
// tool of this process and "" for a name the table does not have.
func originOf(set *agent.ToolSet, name string) string {
	tool, ok := set.Get(name)
	switch {
	case !ok:
		return ""
	case tool.IsLocal():
		return "local"
	}
	return tool.Origin
}
