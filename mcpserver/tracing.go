package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tracing (Options.Tracing). Each request the server handles gets a server
// span, a child of the trace context the client put in the request's
// _meta (SEP-414), so that a client's trace continues here: on the SDK's
// path (stdio and HTTP) by tracingMiddleware, on the direct path by
// tracedDirect. With Options.Tracing nil neither exists: the middleware is
// not installed, and the direct path still refuses any _meta at the same
// switch case as before, so a plain call costs what it did.

// tracingMiddleware starts the server span of every request on the SDK's
// path. Over HTTP a request without a trace in _meta continues the one in
// its traceparent header, if any.
func tracingMiddleware(t *telemetry.Tracing) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var meta map[string]any
			var target string
			if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
				meta = p.GetMeta()
				switch p := p.(type) {
				case *mcp.CallToolParamsRaw:
					target = p.Name
				case *mcp.GetPromptParams:
					target = p.Name
				}
			}
			if _, ok := meta[telemetry.MetaTraceparent]; !ok {
				if extra := req.GetExtra(); extra != nil && extra.Header != nil {
					ctx = telemetry.ExtractHTTP(ctx, extra.Header)
				}
			}
			session, transport := "", "tcp"
			if s := req.GetSession(); s != nil && !reflect.ValueOf(s).IsNil() {
				session = s.ID()
			}
			if strings.HasPrefix(session, "stdio-") {
				transport = "pipe"
			}
			ctx, sp := t.StartMCPServer(ctx, method, target, session, transport, nil, meta)
			res, err := next(ctx, method, req)
			var code int64
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				code = werr.Code
			}
			r, _ := res.(*mcp.CallToolResult)
			sp.EndMCP(err, code, r != nil && r.IsError)
			return res, err
		}
	}
}

// acceptMeta reports whether the direct path may take a tools/call whose
// params have _meta val: only with tracing on, and only when _meta holds
// nothing but the trace context (a progress token or anything else needs
// the SDK's path).
func (s *Server) acceptMeta(val []byte) bool {
	if s.tracing == nil || len(val) == 0 || val[0] != '{' {
		return false
	}
	ok := true
	jsonscan.ForEachMember(val, func(key, v []byte) {
		if !telemetry.IsTraceKey(string(key)) || len(v) == 0 || v[0] != '"' {
			ok = false
		}
	})
	return ok
}

// traceFields reads the trace context out of a direct call's params: the
// string members of its _meta (acceptMeta let only those through).
func traceFields(params []byte) map[string]string {
	var fields map[string]string
	jsonscan.ForEachMember(params, func(key, val []byte) {
		if string(key) != "_meta" || len(val) == 0 || val[0] != '{' {
			return
		}
		jsonscan.ForEachMember(val, func(k, v []byte) {
			ks := string(k)
			vs, ok := jsonscan.String(v)
			if ok && telemetry.IsTraceKey(ks) {
				if fields == nil {
					fields = make(map[string]string, 3)
				}
				fields[ks] = vs
			}
		})
	})
	return fields
}

// startTraced is takeDirect's start of a call with tracing on: as
// without, the call runs on a warm worker and its answer is written (even
// when cancelled, not when the connection is closing), inside the
// request's server span. next says the call is of 2026-07-28, answered as
// the SDK answers that generation.
func (c *lineConn) startTraced(ctx context.Context, cancel context.CancelFunc, id jsonrpc.ID, t *agent.Tool, args json.RawMessage, session string, params []byte, next bool) {
	fields := traceFields(params)
	c.srv.workers.start(func() {
		resp := c.srv.tracedDirect(ctx, id, t, args, session, "pipe", fields)
		if next {
			resp = c.srv.nextGenResponse(resp, id) // a call of 2026-07-28
		}
		c.answerDirect(id.Raw(), resp, c.callCtx.Err() == nil)
		cancel()
	})
}

// tracedDirect is callDirect inside the request's server span, on a
// transport named as tracingMiddleware names it ("pipe", "tcp"). The
// outcome is read off the encoded answer: a JSON-RPC error follows the id
// at once, and a tool's isError is the last member of the result (no
// member of structuredContent can end the message after a single "}}").
func (s *Server) tracedDirect(ctx context.Context, id jsonrpc.ID, t *agent.Tool, args []byte, session, transport string, fields map[string]string) []byte {
	ctx, sp := s.tracing.StartMCPServerStrings(ctx, "tools/call", t.Name, sessionOf(session), transport, id.Raw(), fields)
	sp.SetAttributes(telemetry.AttrDirect.Bool(true))
	resp := s.callDirect(ctx, id, t, args, session)
	head := len(appendID([]byte(`{"jsonrpc":"2.0","id":`), id))
	var code int64
	if len(resp) > head && bytes.HasPrefix(resp[head:], []byte(`,"error":`)) {
		code = jsonrpc.CodeInternalError
	}
	sp.EndMCP(nil, code, bytes.HasSuffix(resp, []byte(`"isError":true}}`)))
	return resp
}

// sessionOf is the MCP session id of a direct call's tool session ("mcp:"
// and the id, see lineConn.toolSession).
func sessionOf(toolSession string) string { return strings.TrimPrefix(toolSession, "mcp:") }
