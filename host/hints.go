package host

// Hints are the words of the program that configures the host for the
// switches behind some of the host's messages (an environment variable, a
// flag). The host does not define those switches, so it names none itself:
// each hint is added to its message, and an empty one adds nothing.
type Hints struct {
	// KeepLocalTools says how to make local tools win a name clash with
	// MCP tools, e.g. "set AGENT_GUARD_MCP_STRICT=1".
	KeepLocalTools string
	// LocalToolsWin names the setting that made local tools win a name
	// clash, e.g. "AGENT_GUARD_MCP_STRICT is set".
	LocalToolsWin string
	// InputRefused follows a message the input guard refused, after "or",
	// e.g. "unset AGENT_GUARD_INPUT if this is a false alarm".
	InputRefused string
	// ContextWindow follows a request that does not fit the context
	// window, after "or", e.g. "set --context-window to the model's real
	// window if it is larger".
	ContextWindow string
	// AllowFlag is the flag that allows a tool pattern, e.g. "--allow".
	AllowFlag string
}
