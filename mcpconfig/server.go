package mcpconfig

import (
	"fmt"
	"strings"
	"time"
)

// Server says how to reach one external MCP server: either a stdio
// command (Command, Args, Env, Dir) or a streamable HTTP endpoint (URL,
// Headers, Token). It is what one entry of an mcpServers config file, or
// one --mcp flag, becomes.
type Server struct {
	// Name identifies the server in tool origins, warnings and errors.
	Name string

	// Command is the executable of a stdio server, found on PATH if it has
	// no path separator. It is started without a shell.
	Command string
	Args    []string
	// Env is merged over the parent's environment (it does not replace it,
	// so PATH and HOME survive).
	Env map[string]string
	// Dir is the working directory; empty means the current one.
	Dir string

	// URL is the endpoint of a streamable HTTP server.
	URL     string
	Headers map[string]string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string

	// ConnectTimeout bounds the connection; 0 means mcpclient.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// CallTimeout bounds each tool call; 0 means mcpclient.DefaultCallTimeout.
	CallTimeout time.Duration

	// ToolPrefix is prepended to every tool name of this server.
	ToolPrefix string
	// AllowedTools, when not empty, keeps only these tools (names as the
	// server sends them, before ToolPrefix).
	AllowedTools []string
	// ExcludedTools drops these tools (names before ToolPrefix).
	ExcludedTools []string

	// Sampling says what becomes of the server's sampling/createMessage
	// requests: SamplingAsk (also ""), SamplingAllow or SamplingDeny.
	Sampling string
	// Roots are the directories offered to the server as its roots; nil
	// means the client's default (the chat offers the working directory),
	// an empty list none.
	Roots []string
}

// The values of Server.Sampling.
const (
	// SamplingAsk: the user approves each request (the default).
	SamplingAsk = "ask"
	// SamplingAllow: requests are answered without asking.
	SamplingAllow = "allow"
	// SamplingDeny: requests are refused.
	SamplingDeny = "deny"
)

// ValidSampling reports whether s is a value of Server.Sampling ("" is
// the default, SamplingAsk).
func ValidSampling(s string) bool {
	return s == "" || s == SamplingAsk || s == SamplingAllow || s == SamplingDeny
}

// IsHTTP reports whether the server is reached over HTTP.
func (c *Server) IsHTTP() bool { return c.URL != "" }

// CommandLine renders the stdio command for messages, quoting arguments
// that contain spaces, so a user can copy it and run it by hand.
func (c *Server) CommandLine() string {
	parts := append([]string{c.Command}, c.Args...)
	for i, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\"'") {
			parts[i] = fmt.Sprintf("%q", p)
		}
	}
	return strings.Join(parts, " ")
}

// Validate checks that the config names exactly one kind of server.
func (c *Server) Validate() error {
	switch {
	case c.Command == "" && c.URL == "":
		return fmt.Errorf("server %q: set either command (stdio) or url (HTTP)", c.Name)
	case c.Command != "" && c.URL != "":
		return fmt.Errorf("server %q: set command (stdio) or url (HTTP), not both", c.Name)
	}
	return nil
}
