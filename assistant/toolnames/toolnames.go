// Package toolnames names the customer-service tools. It imports nothing,
// so that the assistant and the command line (which gives the offline demo
// model these names) share one spelling of each name; assistant's tests
// hold the tools to these names.
package toolnames

// The tools of the customer-service assistant.
const (
	// OrderStatus looks an order up.
	OrderStatus = "getOrderStatus"
	// CreateTicket opens an after-sales ticket.
	CreateTicket = "createTicket"
	// Escalate hands the conversation to a human.
	Escalate = "escalateToHuman"
	// SearchKB is the local knowledge-base search.
	SearchKB = "searchKnowledgeBase"
	// SearchKBRemote is the knowledge-base search as our MCP server
	// publishes it.
	SearchKBRemote = "searchKnowledge"
	// RequestRefund files a refund request that waits for an operator
	// (published by the MCP server, where it may run as a task).
	RequestRefund = "requestRefund"
	// RefundStatus reports the decision on a refund request.
	RefundStatus = "getRefundStatus"
)
