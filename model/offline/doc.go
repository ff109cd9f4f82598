// Package offline is a deterministic customer-service model that needs no
// network and no API key. agentapp picks it when no OPENAI_API_KEY is
// configured (and on --model offline), so a fresh clone can demonstrate the
// whole tool loop: the model really asks for tools, the loop really runs
// them, and the answer is composed from what they returned.
//
// The model only calls tools it finds by name in the request's tool specs, so
// it behaves the same with local tools and with tools adapted from an MCP
// server, whose names may carry a prefix ("agentapp_getOrderStatus",
// "agentapp.getOrderStatus"). An exact name is preferred over a prefixed one.
//
// Rules, applied to the last user message:
//
//   - naming offered tools ("use read_graph"; a name that is a plain word,
//     like echo, only after use, call, run, 调用 or 使用) → those tools, at
//     most four, all at once: a known tool with its usual arguments, any
//     other with the JSON object written in the message, else {}. This is
//     how the demo reaches a connected MCP server's tools;
//   - empty, a greeting or "what can you do" → a short introduction of the
//     four duties;
//   - asking for a person (转人工, 人工, 真人, 客服人员, human, representative,
//     "talk to an agent" …) → escalateToHuman {reason, transcript}, then the
//     hand-off ticket id; without that tool, a plain "not available here";
//   - ticket, complaint or after-sales words (工单, 投诉, 售后, 报修, ticket,
//     complaint, broken …), or refund/return words (退款, 退货, refund, return)
//     unless the message only asks about the policy → createTicket {subject,
//     description}, then the ticket id;
//   - an order number such as A-1024 (any case) → getOrderStatus {orderId},
//     then the status and expected delivery;
//   - anything else → searchKnowledgeBase (or searchKnowledge, as our MCP
//     server names it) {query, k: 3}, then the best-matching sentences of the
//     top hits with [n] citations, or "I don't know" when nothing matches.
//     The demo knowledge base is Chinese, so for an English question the
//     model does what a real one would and searches in both languages: a
//     small glossary of the demo domain adds the Chinese terms of the words
//     it knows (refund 退款, hotel 住宿, business trip 出差, annual leave 年假,
//     laptop 电脑 …) to the query, and counts them as those words when it
//     picks the answer. Words it does not know find nothing, so a question
//     about anything else is still answered with "I don't know".
//
// Once the tools called for the current user message have answered, the
// model always answers with text: it never calls a tool twice for one
// message, so it cannot loop. A tool error result is reported plainly, and
// so is a call a guard refused ({"denied": true}): the answer says it was
// not done. The
// answer is in Chinese when the user wrote Chinese, in English otherwise;
// knowledge-base text is quoted as written, so an English answer may quote
// Chinese sentences, and says so.
package offline

// Notice is what a banner says when the offline model is in use, so the user
// knows why the answers are canned and how to get a real model.
const Notice = "offline demo model (no OPENAI_API_KEY set; set it in the environment or a .env file to use a real model)"

// Rules returns the model's rules in plain English, one per entry, for help
// texts and banners. It returns a fresh slice on every call.
func (m *Model) Rules() []string {
	return []string{
		"naming a connected tool (use read_graph): call it",
		"a greeting or an empty message: introduce the four duties",
		"asking for a person (转人工, 人工, human, representative…): escalateToHuman with the transcript",
		"ticket, complaint or after-sales words (工单, 投诉, 退款, ticket, complaint, refund…): createTicket",
		"an order number like A-1024: getOrderStatus",
		"anything else: searchKnowledgeBase / searchKnowledge (English questions also with the Chinese terms of a small demo glossary), answer with [n] citations or say it does not know",
		"after the tools answered: reply with text, never another call",
	}
}
