// Package mcpbench measures stdio MCP servers from the outside, speaking
// newline-delimited JSON-RPC itself so that the client's own cost is small
// and the same whatever the server's language: cold start, tools/call
// latency and pipelined throughput, the server's CPU time per call and
// resident memory (read from /proc for the server's whole process group),
// and how long the server takes to exit once its stdin is closed.
//
// The command-line front end is bench/cmd/mcpbench; bench/compare.sh runs
// it against agentapp serve and the reference TypeScript server.
package mcpbench
