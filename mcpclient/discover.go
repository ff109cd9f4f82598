package mcpclient

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On stdio the SDK's own negotiation is used (server/discover first, then
// initialize at 2025-11-25 when the server refuses it), with two additions:
// the probe is bounded, because a stdio server that silently ignores an
// unknown method would otherwise hold the connect until its deadline, and a
// server command that did not take protocol 2026-07-28 is remembered, so its
// reconnects go straight to initialize.

// discoverProbeTimeout bounds the server/discover probe on stdio. A server
// that understands it answers at once; one that ignores it costs this much
// once per command.
var discoverProbeTimeout = 3 * time.Second

// maxLegacyCommands caps the remembered commands; past it the memory starts
// afresh (a forgotten command only costs one more probe).
const maxLegacyCommands = 1024

// legacyStdio holds the commands (key: stdioKey) whose server answered the
// probe with an error or not at all.
var legacyStdio struct {
	mu   sync.Mutex
	keys map[string]bool
}

// stdioKey names a server command: the program, its arguments and the
// directory it runs in.
func stdioKey(cfg *mcpconfig.Server) string {
	return strings.Join(append([]string{cfg.Dir, cfg.Command}, cfg.Args...), "\x00")
}

// stdioVersion is the protocol version to offer the stdio server cfg: the
// SDK's newest (which probes with server/discover) unless the command is
// remembered as not taking it.
func stdioVersion(cfg *mcpconfig.Server) string {
	legacyStdio.mu.Lock()
	defer legacyStdio.mu.Unlock()
	if legacyStdio.keys[stdioKey(cfg)] {
		return stdioProtocolVersion
	}
	return stdiofast.NewProtocolVersion
}

// rememberStdioVersion records what the stdio server cfg negotiated.
func rememberStdioVersion(cfg *mcpconfig.Server, s *mcp.ClientSession) {
	legacy := stdiofast.DirectAllowed(s)
	key := stdioKey(cfg)
	legacyStdio.mu.Lock()
	defer legacyStdio.mu.Unlock()
	if !legacy {
		delete(legacyStdio.keys, key)
		return
	}
	if legacyStdio.keys == nil || len(legacyStdio.keys) >= maxLegacyCommands {
		legacyStdio.keys = map[string]bool{}
	}
	legacyStdio.keys[key] = true
}

// discoverProbeMiddleware bounds the server/discover request by
// discoverProbeTimeout; when it runs out the SDK falls back to initialize
// on the same connection, within the connect's own deadline.
func discoverProbeMiddleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "server/discover" {
				return next(ctx, method, req)
			}
			ctx, cancel := context.WithTimeout(ctx, discoverProbeTimeout)
			defer cancel()
			return next(ctx, method, req)
		}
	}
}
