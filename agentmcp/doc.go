// Package agentmcp is agentapp's boundary with the Model Context Protocol.
//
// Out: NewServer publishes the engine's tools and the knowledge base as an
// MCP server. In: Connect starts or dials an MCP server and adapts each of
// its tools into an ordinary *agent.Tool, so the tool loop runs it without
// knowing where it came from. All protocol detail (JSON-RPC, transports,
// handshakes, two-channel results, process lifetimes) stays in this package.
package agentmcp
