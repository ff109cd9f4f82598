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
	// Transport chooses how to speak to URL: TransportHTTP (streamable
	// HTTP only), TransportSSE (the legacy HTTP+SSE transport), or
	// TransportAuto, the zero value: streamable HTTP first, then SSE when
	// the server answers like a legacy one.
	Transport Transport
	// OAuth tunes the OAuth 2.1 login an HTTP server may ask for; nil means
	// the defaults (dynamic client registration, the server's scopes, a
	// free loopback port).
	OAuth *OAuth

	// ConnectTimeout bounds the connection; 0 means mcpclient.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// CallTimeout bounds each tool call; 0 means mcpclient.DefaultCallTimeout.
	CallTimeout time.Duration

	// Tasks says which tool calls run as MCP tasks: TasksAuto (also ""),
	// TasksRequired or TasksNever (tasks.go).
	Tasks string
	// TaskTimeout bounds a call that runs as a task, instead of
	// CallTimeout: the task's lifetime (TTL) asked of the server is capped
	// by it; 0 means DefaultTaskTimeout.
	TaskTimeout time.Duration

	// ToolPrefix is prepended to every tool name of this server.
	ToolPrefix string
	// AllowedTools, when not empty, keeps only these tools (names as the
	// server sends them, before ToolPrefix).
	AllowedTools []string
	// ExcludedTools drops these tools (names before ToolPrefix).
	ExcludedTools []string

	// MaxOutputTokens caps one tool result of this server as the model
	// sees it; above it the model gets the head and reads on through
	// readToolResult. 0 means the host's cap.
	MaxOutputTokens int

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

// Transport is how an HTTP server is spoken to.
type Transport string

const (
	TransportAuto Transport = ""
	TransportHTTP Transport = "http"
	TransportSSE  Transport = "sse"
)

// OAuth is the client side of an OAuth 2.1 login, for servers whose
// authorization server does not support dynamic client registration or
// that want specific scopes. Every field is optional.
type OAuth struct {
	// ClientID and ClientSecret are a client registered with the
	// authorization server beforehand; they are used first when set.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is an https URL of a client ID metadata document,
	// used when the authorization server supports such documents and no
	// ClientID is set.
	ClientMetadataURL string
	// Scopes, when set, are requested instead of those the server names.
	Scopes []string
	// CallbackPort is the loopback port of the login's redirect, for
	// clients registered with a fixed redirect URI; 0 picks a free port.
	CallbackPort int
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
