// Package assistant is agentapp's customer-service composition: which
// tools the assistant has (local.go), what `agentapp serve` publishes and
// the instructions it sends (serve.go), the system prompt (prompt.go), and
// the knowledge base as MCP documents (docs.go).
//
// The host (package host) runs any assistant and the MCP packages know no
// domain; this is the one place that knows the domain (support, kb) and
// how it is offered. Adding a local tool is one file here with its
// constructor and one entry in localTools.
//
// cmd/agentapp, the benchmarks and the red-team tests build their tools
// and servers from it, so that they use exactly what the binary uses.
package assistant
