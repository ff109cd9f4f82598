package mcpclient

import (
	"context"
	"errors"
	"maps"
	"reflect"

	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tracing. When the caller's context carries a trace (telemetry.FromContext:
// a turn, a command's span), every request to a server gets a client span,
// and the span's trace context goes in the request's _meta (SEP-414), so
// that a server that traces continues the same trace: on the SDK's path by
// tracingMiddleware, on the direct stdio path by tracedCall. Without a
// trace nothing is added: one context lookup per request.

// spannedKey marks a context whose tools/call already has its client span
// (the direct path's), so that a fallback to the SDK's path does not start
// a second one.
type spannedKey struct{}

// transportOf names c's transport for network.transport.
func transportOf(c *conn) string {
	if c.ht != nil {
		return "tcp"
	}
	return "pipe"
}

// tracingMiddleware starts the client span of each request the SDK sends
// on c and puts its trace context in the request's _meta. The caller's
// _meta map is copied, never written.
func (b *Bridge) tracingMiddleware(c *conn) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if telemetry.FromContext(ctx) == nil {
				return next(ctx, method, req)
			}
			p := req.GetParams()
			if p == nil || reflect.ValueOf(p).IsNil() {
				return next(ctx, method, req)
			}
			if ctx.Value(spannedKey{}) != nil {
				return next(ctx, method, req)
			}
			target, name := "", method
			switch p := p.(type) {
			case *mcp.CallToolParams:
				target = p.Name
			case *mcp.GetPromptParams:
				target = p.Name
			case *tasks.ExtToolCallParams:
				// Our alias of tools/call (renamed on the wire): the
				// span says what the server sees.
				target, name = p.Name, "tools/call"
			}
			ctx, sp := telemetry.StartMCPClient(ctx, name, target, b.name, transportOf(c))
			if c.session != nil {
				sp.SetSession(c.session.ID())
			}
			meta := maps.Clone(map[string]any(p.GetMeta()))
			p.SetMeta(telemetry.InjectMeta(ctx, meta))
			res, err := next(ctx, method, req)
			endClientSpan(sp, res, err)
			return res, err
		}
	}
}

// tracedCall is c.callTool inside a client span when ctx carries a trace
// and c has the direct path (which the SDK's middleware does not see); p
// is copied before its _meta gets the trace context.
func (b *Bridge) tracedCall(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if c.direct == nil || p == nil || telemetry.FromContext(ctx) == nil {
		return c.callTool(ctx, p)
	}
	ctx, sp := telemetry.StartMCPClient(ctx, "tools/call", p.Name, b.name, "pipe")
	sp.SetAttributes(telemetry.AttrDirect.Bool(true))
	cp := *p
	cp.Meta = telemetry.InjectMeta(ctx, maps.Clone(p.Meta))
	res, err := c.callTool(context.WithValue(ctx, spannedKey{}, true), &cp)
	endClientSpan(sp, res, err)
	return res, err
}

// endClientSpan records a request's outcome on its span and ends it.
func endClientSpan(sp *telemetry.Span, res mcp.Result, err error) {
	var code int64
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		code = werr.Code
	}
	r, _ := res.(*mcp.CallToolResult)
	sp.EndMCP(err, code, r != nil && r.IsError)
}
