package mcpserver

import (
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaSession is the _meta key of a tools/call whose value, a string,
// names the client's conversation for the tools' idempotency rules
// (createTicket returns the ticket already opened for the same request in
// the same conversation). Without it the conversation is the MCP session,
// which lives on one server: a client of stateless replicas behind a load
// balancer, whose retry may land on another replica, sends it to keep its
// retries idempotent.
const MetaSession = "agentapp/session"

// maxMetaSessionBytes bounds a client's conversation name.
const maxMetaSessionBytes = 200

// callSession returns the idempotency session of a tool call: the client's
// own MetaSession, else the MCP session's id. A value that is not a short
// valid string is ignored rather than refused, as an unknown _meta entry
// would be. The two kinds have different prefixes, so a client cannot name
// another's MCP session.
func callSession(req *mcp.CallToolRequest, ids *sessionIDs) string {
	if req.Params != nil {
		if v, ok := req.Params.Meta[MetaSession].(string); ok && v != "" && len(v) <= maxMetaSessionBytes && utf8.ValidString(v) {
			return "client:" + v
		}
	}
	return ids.of(req.Session)
}
