package nextgen

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLegacy caps the remembered server commands; past it the memory
// starts afresh (a forgotten command only costs one more probe).
const maxLegacy = 1024

// Legacy remembers the stdio server commands, by a key the caller makes
// of them, that did not take protocol 2026-07-28, so that their reconnects
// go straight to initialize instead of probing with server/discover again.
// The zero value is ready to use.
type Legacy struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Is reports whether the command key is remembered as legacy.
func (l *Legacy) Is(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.keys[key]
}

// Remember records whether the command key negotiated a legacy version.
func (l *Legacy) Remember(key string, legacy bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !legacy {
		delete(l.keys, key)
		return
	}
	if l.keys == nil || len(l.keys) >= maxLegacy {
		l.keys = map[string]bool{}
	}
	l.keys[key] = true
}

// BoundDiscover bounds the server/discover request by timeout(): a stdio
// server that silently ignores an unknown method would otherwise hold the
// connect until its deadline. When it runs out the SDK falls back to
// initialize on the same connection, within the connect's own deadline.
func BoundDiscover(timeout func() time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "server/discover" {
				return next(ctx, method, req)
			}
			ctx, cancel := context.WithTimeout(ctx, timeout())
			defer cancel()
			return next(ctx, method, req)
		}
	}
}
