// Package agentmcp is agentapp's boundary with the Model Context Protocol.
//
// Out: NewServer publishes the engine's tools and the knowledge base as an
// MCP server; StdioServerTransport and NewHTTPHandler carry it, and on
// stdio DirectCalls answers the plain tools/call itself, past the SDK's
// request path, with the same answers at a fraction of the cost. In: Connect
// starts or dials an MCP server and adapts each of its tools into an
// ordinary *agent.Tool, so the tool loop runs it without knowing where it
// came from. All protocol detail (JSON-RPC, transports, handshakes,
// two-channel results, process lifetimes) stays in this package.
//
// A Bridge supervises its server: a stdio server runs in its own process
// group and is stopped as a group (EOF, SIGTERM, SIGKILL); a server that
// exits is restarted on the next call, within a budget, after which it is
// reported down until restarted by hand; tools/list_changed refreshes the
// adapted tools. LoadConfig reads the mcpServers files of Claude Desktop
// and Cursor into ServerConfig values.
package agentmcp
