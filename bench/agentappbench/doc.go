// Package agentappbench holds Go benchmarks of agentapp's own MCP paths
// that no single package owns: the bridge's round trip to agentapp's
// server in-process and over stdio, and the server alone over real pipes
// with a raw JSON-RPC client (the profile target for the server's
// tools/call). Run them with
//
//	go -C bench test -run '^$' -bench . ./agentappbench
//
// The stdio benchmarks use $AGENTAPP_BIN, or build cmd/agentapp into a
// temporary directory once.
package agentappbench
