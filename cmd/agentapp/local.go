package main

import (
	"context"
	"fmt"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// localTools prepares the customer-service domain on st (migrating and, the
// first time, seeding orders and the demo knowledge base) and returns the
// local tools in the order the model is offered them: order status,
// tickets, hand-off to a human, knowledge-base search.
func localTools(ctx context.Context, st *store.Store) ([]*agent.Tool, error) {
	svc, err := support.New(ctx, st)
	if err != nil {
		return nil, fmt.Errorf("prepare the support tools: %w", err)
	}
	k, err := kb.Open(ctx, st)
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
		k.SearchTool(),
	}, nil
}
