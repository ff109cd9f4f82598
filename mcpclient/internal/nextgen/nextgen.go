// Package nextgen holds the client's sending middlewares for sessions of
// protocol 2026-07-28 or later, which drop or move what that protocol no
// longer takes as its own request (roots notices, logging/setLevel).
package nextgen

import (
	"context"
	"reflect"
	"strings"

	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LogLevel puts the log level wanted in the _meta of each request
// on sessions of protocol 2026-07-28 or later, where it replaces
// logging/setLevel (which the bridge sends on older sessions).
func LogLevel(level mcp.LoggingLevel) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if level == "" || strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			cs, ok := req.GetSession().(*mcp.ClientSession)
			if !ok || cs.InitializeResult() == nil || stdiofast.DirectAllowed(cs) {
				return next(ctx, method, req)
			}
			if p, ok := req.GetParams().(interface {
				GetMeta() map[string]any
				SetMeta(map[string]any)
			}); ok && !isNilParams(p) {
				meta := p.GetMeta()
				if meta == nil {
					meta = map[string]any{}
				}
				meta[mcp.MetaKeyLogLevel] = level
				p.SetMeta(meta)
			}
			return next(ctx, method, req)
		}
	}
}

// isNilParams reports whether p is a typed nil pointer (a request sent
// without params), whose methods must not be called.
func isNilParams(p any) bool {
	v := reflect.ValueOf(p)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// RootsNotice drops notifications/roots/list_changed on sessions
// of protocol 2026-07-28 or later. There the server has no session to keep
// a roots list in: it asks for the roots in an input-required result when
// it needs them, and the SDK answers from the client's current roots. A
// streamable HTTP server of that protocol refuses the notification (400),
// and the SDK's transport then closes the connection, so the roots set
// after connecting (after connecting, SetRoots) would cost the whole connection.
func RootsNotice() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/roots/list_changed" {
				if cs, ok := req.GetSession().(*mcp.ClientSession); ok && !stdiofast.DirectAllowed(cs) && cs.InitializeResult() != nil {
					return nil, nil
				}
			}
			return next(ctx, method, req)
		}
	}
}
