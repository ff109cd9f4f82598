package offline

// DemoTools are the assistant's tool names, as cmd/agentapp gives them; the
// tests of both test packages use them.
var DemoTools = Tools{
	Order:        "getOrderStatus",
	Ticket:       "createTicket",
	Handoff:      "escalateToHuman",
	Search:       "searchKnowledgeBase",
	SearchRemote: "searchKnowledge",
}
