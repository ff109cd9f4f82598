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
// bridge), are wrapped with the guards (guard.Wrap: allowlist, injection
// scan, confirmation, PII mask) and then merged with the local tools by
// agent.Merge, with the strict policy taken from the guards' config
// (AGENT_GUARD_MCP_STRICT) so one reading of the environment decides both.
// Local tools are never wrapped.
//
// Wrapping comes before the merge so that an MCP tool that wins a name
// clash is the guarded one. A server tool without an Origin is an error:
// the guards would take it for a local tool and let it through unguarded.
//
// The chat calls it in New; the command line and the red-team tests call
// the chat, so the table a test inspects is the table a user gets.
func BuildTools(local []*agent.Tool, servers []Server, g *guard.Guards) (*agent.ToolSet, agent.MergeReport, error) {
	lists := make([]agent.ServerTools, len(servers))
	for i, s := range servers {
		tools := s.Tools()
		wrapped := make([]*agent.Tool, len(tools))
		for j, t := range tools {
			if t != nil && t.IsLocal() {
				return nil, agent.MergeReport{}, fmt.Errorf("MCP server %q offered tool %q without an origin, so the guards could not tell it from a local tool; this is a bug in the server bridge", s.Name(), t.Name)
			}
			wrapped[j] = guard.Wrap(t, g)
		}
		lists[i] = agent.ServerTools{Server: s.Name(), Tools: wrapped}
	}
	return agent.Merge(local, lists, g.Config().MCPStrict)
}
