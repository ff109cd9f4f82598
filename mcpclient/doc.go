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
//
// The package takes its configuration from its callers and reads the
// environment only where the environment is what the servers run in, not
// a setting of the package:
//   - a stdio server gets this process's environment with ServerConfig.Env
//     merged over it, as the MCP clients whose config files LoadConfig reads
//     do (a server started without PATH or HOME rarely works);
//   - LoadConfig expands ${VAR} from the process environment unless
//     LoadConfigOptions.LookupEnv says otherwise, since those files are
//     written for it;
//   - on Windows a .cmd or .bat server is run through %ComSpec%, where
//     Windows says its command interpreter is.
//
// Nothing is logged on the default logger: WithLogger and
// LoadConfigOptions.Logger say where the package's records go, and
// without them they are discarded.
package mcpclient
