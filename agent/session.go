package agent

import "context"

type sessionKey struct{}

// WithSession returns a context that carries the id of the conversation a
// tool call belongs to. The engine does not read it; tools do, to tell one
// conversation's calls from another's (createTicket's idempotency window,
// the hand-off's session). It lives here, in the package every tool and
// every caller already imports, so that a caller such as the MCP server can
// set it without knowing which tools care.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionFrom returns the session id set by WithSession, or "" if there is
// none; calls without a session all share the empty one.
func SessionFrom(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

type callKey struct{}

// CallIDFrom returns the model's id of the tool call whose Execute ctx
// belongs to, or "" outside a call. The engine sets it so that what a
// tool reports while it runs (an MCP task's status) can be tied to the
// call a front end shows.
func CallIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(callKey{}).(string)
	return id
}

func withCallID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, callKey{}, id)
}
