package chat

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// LocalTools prepares the customer-service domain on st (migrating and, the
// first time, seeding orders and the demo knowledge base) and returns the
// local tools in the order the model is offered them: order status,
// tickets, hand-off to a human, knowledge-base search.
//
// The guards touch the local tools in two places only. The knowledge-base
// search quotes documents the user did not write, so its hits are masked
// when the PII guard is on (g.MaskTool). The knowledge base is opened with
// the ingest check (g.IngestCheck), so a document ingested through this
// value is refused when it holds an injection phrase, whatever the
// switches. A nil g leaves the search unmasked and still checks ingest.
//
// logger receives what the domain reports while it is prepared (the demo
// knowledge base being seeded); nil discards it.
func LocalTools(ctx context.Context, st *store.Store, g *guard.Guards, logger *slog.Logger) ([]*agent.Tool, error) {
	svc, err := support.New(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("prepare the support tools: %w", err)
	}
	k, err := kb.Open(ctx, st, kb.WithIngestCheck(g.IngestCheck()), kb.WithLogger(logger))
	if err != nil {
		return nil, fmt.Errorf("open the knowledge base: %w", err)
	}
	if err := k.SeedDemo(ctx); err != nil {
		return nil, fmt.Errorf("seed the demo knowledge base: %w", err)
	}
	return []*agent.Tool{
		svc.OrderStatusTool(),
		svc.CreateTicketTool(),
		svc.EscalateTool(),
		g.MaskTool(k.SearchTool()),
	}, nil
}

// BuildTools makes the one tool table of a chat from the local tools and
// the connected servers. Each server's tools, as the server's config let
// them through (allowedTools, excludedTools, toolPrefix are applied by the
// bridge), are wrapped with the guards and merged with the local tools
// (guardAndMerge). Local tools are never wrapped.
//
// The chat calls it in New; the command line and the red-team tests call
// the chat, so the table a test inspects is the table a user gets.
func BuildTools(local []*agent.Tool, servers []Server, g *guard.Guards) (*agent.ToolSet, MergeReport, error) {
	lists := make([]serverTools, len(servers))
	for i, s := range servers {
		lists[i] = serverTools{server: s.Name(), tools: s.Tools()}
	}
	return guardAndMerge(local, lists, g)
}

// guardAndMerge wraps every tool of lists with the guards (guard.Wrap:
// allowlist, injection scan, confirmation, PII mask) and then merges them
// with the local tools, with the strict policy taken from the guards'
// config (guard.EnvMCPStrict) so one reading of the environment decides
// both. BuildTools and the rebuild of a running chat's table (buildLive)
// both end here, so a table is guarded the same way however it was made.
//
// Wrapping comes before the merge so that an MCP tool that wins a name
// clash is the guarded one. A server tool without an Origin is an error:
// the guards would take it for a local tool and let it through unguarded.
func guardAndMerge(local []*agent.Tool, lists []serverTools, g *guard.Guards) (*agent.ToolSet, MergeReport, error) {
	guarded := make([]serverTools, len(lists))
	for i, l := range lists {
		wrapped := make([]*agent.Tool, len(l.tools))
		for j, t := range l.tools {
			if t == nil {
				continue // merge skips it with a warning
			}
			if t.IsLocal() {
				return nil, MergeReport{}, fmt.Errorf("MCP server %q offered tool %q without an origin, so the guards could not tell it from a local tool; this is a bug in the server bridge", l.server, t.Name)
			}
			wrapped[j] = guard.Wrap(t, g)
		}
		guarded[i] = serverTools{server: l.server, tools: wrapped}
	}
	return merge(local, guarded, g.Config().MCPStrict)
}
