// Package mcpserver publishes agent tools, and optionally a store of
// documents, as a Model Context Protocol server.
//
// New builds the server from *agent.Tool values: the very tools a local
// loop runs, so there is one schema for local validation and for MCP
// clients, and one function (runTool) that runs a published tool. The
// server runs on stdio (ServeStdio, or any pair of streams with
// NewIOTransport), on streamable HTTP (NewHTTPHandler, RunHTTP) or on any
// transport of the SDK (Connect).
//
// On its own line transport the server answers a plain tools/call past the
// SDK's request path, with the same bytes at a fraction of the cost; the
// golden transcripts in testdata/server hold the SDK's transport, ours, and
// ours with that direct path to the same answers.
//
// The package knows nothing of what the tools do: cmd/agentapp (through
// package assistant) decides what agentapp publishes, its instructions and
// where documents come from.
package mcpserver
