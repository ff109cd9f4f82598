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
// A Bridge supervises its server: a stdio server runs in its own process
// group and is stopped as a group (EOF, SIGTERM, SIGKILL); a server that
// exits is restarted on the next call, within a budget, after which it is
// reported down until restarted by hand; tools/list_changed refreshes the
// adapted tools. LoadConfig reads the mcpServers files of Claude Desktop
// and Cursor into ServerConfig values.
package mcpclient
