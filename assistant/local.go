package assistant

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

// Domain is what the local tools are made from.
type Domain struct {
	Support *support.Service
	KB      *kb.KB
	// Guards touch the local tools in one place only: the knowledge-base
	// search quotes documents the user did not write, so its hits are
	// masked when the PII guard is on. Nil guards mask nothing.
	Guards *guard.Guards
}

// localTools are the local tools in the order the model is offered them.
// A new local tool is a constructor in a file of its own and an entry
// here.
var localTools = []func(*Domain) *agent.Tool{
	orderStatusTool,
	createTicketTool,
	escalateTool,
	searchTool,
}

func orderStatusTool(d *Domain) *agent.Tool  { return d.Support.OrderStatusTool() }
func createTicketTool(d *Domain) *agent.Tool { return d.Support.CreateTicketTool() }
func escalateTool(d *Domain) *agent.Tool     { return d.Support.EscalateTool() }
func searchTool(d *Domain) *agent.Tool       { return d.Guards.MaskTool(d.KB.SearchTool()) }

// Tools returns the local tools of d, in the order the model is offered
// them.
func (d *Domain) Tools() []*agent.Tool {
	out := make([]*agent.Tool, len(localTools))
	for i, mk := range localTools {
		out[i] = mk(d)
	}
	return out
}

// OpenDomain prepares the customer-service domain on st: it migrates and,
// the first time, seeds orders and the demo knowledge base. The knowledge
// base is opened with the ingest check (g.IngestCheck), so a document
// ingested through it is refused when it holds an injection phrase,
// whatever the switches; a nil g still checks ingest. logger receives what
// the domain reports while it is prepared; nil discards it.
func OpenDomain(ctx context.Context, st *store.Store, g *guard.Guards, logger *slog.Logger) (*Domain, error) {
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
	return &Domain{Support: svc, KB: k, Guards: g}, nil
}

// LocalTools opens the domain on st (OpenDomain) and returns its local
// tools: order status, tickets, hand-off to a human, knowledge-base search.
func LocalTools(ctx context.Context, st *store.Store, g *guard.Guards, logger *slog.Logger) ([]*agent.Tool, error) {
	d, err := OpenDomain(ctx, st, g, logger)
	if err != nil {
		return nil, err
	}
	return d.Tools(), nil
}
