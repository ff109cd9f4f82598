// Package mcpconfig reads and names the MCP servers a user configures: the
// mcpServers files of Claude Desktop and Cursor (stdio command/args/env,
// HTTP url/headers, ${VAR} expansion) plus agentapp's own fields
// (disabled, timeout, allowedTools, excludedTools, toolPrefix), and the
// one-line --mcp form, and the names tools are offered under (toolPrefix,
// and ExposedName's mapping of names model providers would refuse).
//
// It is apart from package mcpclient, which connects what it describes,
// because where servers are configured (files, scopes, flags) is a concern
// of its own that the connection code need not know.
//
// Load expands ${VAR} from the process environment unless
// LoadOptions.LookupEnv says otherwise, since those files are written for
// it; its warnings (unknown fields, an empty file) go to LoadOptions.Logger
// and are discarded without one.
package mcpconfig
