// Package mcpclient is agentapp's client side of the Model Context
// Protocol: it connects the MCP servers a user configures and adapts their
// tools into ordinary *agent.Tool values, so the tool loop runs them
// without knowing where they came from.
//
// Connect starts a stdio server or dials a streamable HTTP one (and
// ConnectInMemory a server in this process) and returns a Bridge, the same
// face for every transport. All protocol detail (JSON-RPC, transports,
// handshakes, two-channel results, process lifetimes) stays in this
// package; it knows nothing of agentapp's domain or of the chat.
//
// Remote servers: an HTTP server is spoken to with streamable HTTP or the
// legacy HTTP+SSE transport (mcpconfig.Server.Transport; a bare URL tries
// the first, then the second). WithOAuth lets an HTTP server of either
// transport that answers 401 be logged in to with OAuth 2.1 through the
// SDK's auth package (the glue is package mcpclient/oauth), the tokens
// kept in an oauth.TokenStore; without a browser allowed, a server that
// needs a login fails with an *oauth.LoginRequiredError.
//
// A Bridge supervises its server: a stdio server runs in its own process
// group and is stopped as a group (EOF, SIGTERM, SIGKILL); a server that
// exits is restarted on the next call, within a budget, after which it is
// reported down until restarted by hand; tools/list_changed refreshes the
// adapted tools. What to connect is described by mcpconfig.Server values,
// which package mcpconfig reads from mcpServers files and --mcp flags.
//
// The client half of the protocol is the host's to decide: WithSampler,
// WithElicitor and WithRoots advertise sampling, elicitation and roots and
// route the server's requests to what the host supplies (the chat's model
// and terminal, or agentapp mcp's flags), under each server's
// mcpconfig.Server.Sampling policy; WithProgress and WithServerLogs pass
// on progress and log notifications. A capability whose handler the host
// did not supply is not advertised, so a server never offers a feature
// that would fail every time. Resources and prompts are listed when a
// server connects and again after it announces a change.
//
// A Bridge assumes its server may misbehave, and bounds what that costs:
// every request has a deadline (the server's call timeout when the caller
// gives none); every listing follows bounds of pages, items and bytes and
// stops at a repeated cursor; one message is at most
// supervise.MaxFrameSize bytes on stdio and HTTP alike; tool names are
// offered as mcpconfig.ExposedName makes them; what a server writes
// outside the protocol reaches the user's terminal escaped and
// rate-limited; and Close stops the helpers a stdio server
// started outside its process group (on Linux).
//
// The package takes its configuration from its callers and reads the
// environment only where the environment is what the servers run in, not
// a setting of the package:
//   - a stdio server gets this process's environment with
//     mcpconfig.Server.Env merged over it, as the MCP clients whose config
//     files mcpconfig reads do (a server started without PATH or HOME
//     rarely works);
//   - on Windows a .cmd or .bat server is run through %ComSpec%, where
//     Windows says its command interpreter is;
//   - the default opener of an OAuth login (package oauth) runs $BROWSER,
//     the user's choice of browser for every program.
//
// Nothing is logged on the default logger: WithLogger says where the
// package's records go, and without it they are discarded.
package mcpclient
