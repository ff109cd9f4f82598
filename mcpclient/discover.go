package mcpclient

import (
	"strings"
	"time"

	"github.com/agentapp/agentapp/mcpclient/internal/nextgen"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// On stdio the SDK's own negotiation is used (server/discover first, then
// initialize at 2025-11-25 when the server refuses it), with two additions:
// the probe is bounded (nextgen.BoundDiscover), and a server command that
// did not take protocol 2026-07-28 is remembered (legacyStdio), so its
// reconnects go straight to initialize.

// discoverProbeTimeout bounds the server/discover probe on stdio. A server
// that understands it answers at once; one that ignores it costs this much
// once per command.
var discoverProbeTimeout = 3 * time.Second

// legacyStdio holds the commands (key: stdioKey) whose server answered the
// probe with an error or not at all.
var legacyStdio nextgen.Legacy

// stdioKey names a server command: the program, its arguments and the
// directory it runs in.
func stdioKey(cfg *mcpconfig.Server) string {
	return strings.Join(append([]string{cfg.Dir, cfg.Command}, cfg.Args...), "\x00")
}

// stdioVersion is the protocol version to offer the stdio server cfg: the
// SDK's newest (which probes with server/discover) unless the command is
// remembered as not taking it.
func stdioVersion(cfg *mcpconfig.Server) string {
	if legacyStdio.Is(stdioKey(cfg)) {
		return stdioProtocolVersion
	}
	return stdiofast.NewProtocolVersion
}

// rememberStdioVersion records what the stdio server cfg negotiated.
func rememberStdioVersion(cfg *mcpconfig.Server, s *mcp.ClientSession) {
	legacyStdio.Remember(stdioKey(cfg), stdiofast.DirectAllowed(s))
}

func discoverProbeMiddleware() mcp.Middleware {
	return nextgen.BoundDiscover(func() time.Duration { return discoverProbeTimeout })
}
