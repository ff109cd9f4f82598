package agentmcp

import (
	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/support"
)

// PublishedTools returns the tools `agentapp serve` publishes, in order:
// getOrderStatus, createTicket and searchKnowledge (the knowledge-base
// search under its MCP name). They are the very values the local loop
// uses, so the MCP schemas are the local schemas.
//
// escalateToHuman is deliberately left out: a hand-off to a human carries
// the conversation so far, which only the local chat has. An MCP call is
// session-less and arrives without that conversation, so publishing the
// tool would produce hand-offs with no context.
func PublishedTools(svc *support.Service, k *kb.KB) []*agent.Tool {
	return []*agent.Tool{svc.OrderStatusTool(), svc.CreateTicketTool(), k.MCPSearchTool()}
}
