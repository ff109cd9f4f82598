package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/internal/textsafe"
)

// ServerState is where a configured MCP server stands, as the banner and
// /mcp show it. A running server reports its supervisor's finer state
// (connected, restarting, down) instead.
type ServerState string

// The states of a configured server that is not running.
const (
	// StateFailed: the server did not connect; the reason is shown.
	StateFailed ServerState = "failed"
	// StateDisabled: the config says "disabled": true, or /mcp disable
	// stopped it for this chat.
	StateDisabled ServerState = "disabled"
	// StateNeedsLogin: the server refused the connection until the user
	// logs in; the command that does it is shown.
	StateNeedsLogin ServerState = "needs login"
)

// Inactive is a configured MCP server that is not running: it failed to
// connect, it needs a login, or it is disabled. The chat starts without it
// and lists it with its state, so one broken server does not keep the
// others from being used.
type Inactive struct {
	Name string
	// Disabled is set for a server the config disables; Err is then nil.
	Disabled bool
	// DisabledBy says where it was disabled, for the hint on enabling it
	// (e.g. the config file); "" means /mcp disable in this chat.
	DisabledBy string
	// Err is why the server failed to connect.
	Err error
}

// State is the server's state: disabled, needs login (the error carries
// a LoginHint) or failed.
func (in Inactive) State() ServerState {
	switch {
	case in.Disabled:
		return StateDisabled
	case LoginHint(in.Err) != "":
		return StateNeedsLogin
	}
	return StateFailed
}

// LoginHint returns the command that logs in to a server that refused the
// connection for want of a login, or "" when err is not such a refusal.
// Any error in the chain with a LoginHint() string method is one (the
// OAuth client's login-required error has it), so the chat needs no
// knowledge of how logging in works.
func LoginHint(err error) string {
	var h interface{ LoginHint() string }
	if err != nil && errors.As(err, &h) {
		return h.LoginHint()
	}
	return ""
}

// describe is the state and the reason, as one line for the banner and
// /mcp: "failed: connection refused", "needs login: run agentapp mcp login
// x", "disabled (...)".
func (in Inactive) describe() string {
	switch st := in.State(); st {
	case StateDisabled:
		if in.DisabledBy != "" {
			return "disabled in " + in.DisabledBy
		}
		return "disabled (enable it with /mcp enable " + in.Name + ")"
	case StateNeedsLogin:
		return "needs login: " + LoginHint(in.Err)
	default:
		msg := "no reason given"
		if in.Err != nil {
			msg = firstLine(in.Err.Error())
		}
		return "failed: " + msg
	}
}

// firstLine is the first line of s, marked when there was more (the
// server's stderr tail, say, which /mcp restart shows in full).
func firstLine(s string) string {
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l + " …"
	}
	return s
}

// inactiveIndex returns the index of the inactive server called name, or -1.
func (c *Chat) inactiveIndex(name string) int {
	return slices.IndexFunc(c.inactive, func(in Inactive) bool { return in.Name == name })
}

// serverIndex returns the index of the running server called name, or -1.
func (c *Chat) serverIndex(name string) int {
	return slices.IndexFunc(c.cfg.Servers, func(s Server) bool { return s.Name() == name })
}

// serverNames lists every configured server, running or not, for the
// message that a name is unknown.
func (c *Chat) serverNames() []string {
	var names []string
	for _, s := range c.cfg.Servers {
		names = append(names, s.Name())
	}
	for _, in := range c.inactive {
		names = append(names, in.Name)
	}
	return names
}

// unknownServer says that no server is called name, and which ones are.
func (c *Chat) unknownServer(w io.Writer, name string) {
	names := c.serverNames()
	if len(names) == 0 {
		fmt.Fprintf(w, "No MCP server is named %s; no servers are configured.\n", textsafe.Escape(name))
		return
	}
	fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("No MCP server is named %s; the servers are: %s.", name, strings.Join(names, ", "))))
}

// printInactive writes one line per server that is not running, indented
// as /mcp lists servers (indent "  ") or as the banner does ("").
func (c *Chat) printInactive(w io.Writer, indent string) {
	for _, in := range c.inactive {
		if indent == "" {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("MCP server %s: %s", in.Name, in.describe())))
			continue
		}
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("%s%s: %s", indent, in.Name, in.describe())))
		switch in.State() {
		case StateFailed:
			fmt.Fprintf(w, "    try it again with /mcp restart %s\n", textsafe.Escape(in.Name))
		case StateNeedsLogin:
			fmt.Fprintf(w, "    after logging in: /mcp restart %s\n", textsafe.Escape(in.Name))
		}
	}
}

// disableServer is /mcp disable NAME: the server is stopped for the rest of
// this chat and its tools leave the table.
func (c *Chat) disableServer(ctx context.Context, name string) {
	out := c.cfg.Out
	i := c.serverIndex(name)
	if i < 0 {
		if j := c.inactiveIndex(name); j >= 0 {
			fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s is not running (%s).", name, c.inactive[j].describe())))
			return
		}
		c.unknownServer(out, name)
		return
	}
	c.toolsMu.Lock()
	s := c.cfg.Servers[i]
	c.cfg.Servers = slices.Delete(slices.Clone(c.cfg.Servers), i, i+1)
	c.inactive = append(c.inactive, Inactive{Name: name, Disabled: true})
	c.rebuildLocked(ctx)
	c.toolsMu.Unlock()
	if err := s.Close(); err != nil {
		fmt.Fprintf(c.cfg.Err, "agentapp: warning: %s\n", escapeLines(err.Error()))
	}
	fmt.Fprintf(out, "MCP server %s disabled for this chat; its tools are no longer offered (/mcp enable %s brings it back).\n", textsafe.Escape(name), textsafe.Escape(name))
}

// startInactive is /mcp enable NAME, and /mcp restart NAME of a server that
// failed: it connects the server and merges its tools in.
func (c *Chat) startInactive(ctx context.Context, j int) {
	out := c.cfg.Out
	in := c.inactive[j]
	if in.Disabled && in.DisabledBy != "" {
		fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s is disabled in %s; set \"disabled\": false there (or remove the field) and start the chat again.", in.Name, in.DisabledBy)))
		return
	}
	if c.cfg.Connect == nil {
		fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s cannot be started from this chat; start the chat again to retry it.", in.Name)))
		return
	}
	ctx, stop := c.interruptible(ctx)
	defer stop()
	fmt.Fprintf(out, "Connecting MCP server %s…\n", textsafe.Escape(in.Name))
	s, err := c.cfg.Connect(ctx, in.Name)
	if err != nil {
		c.toolsMu.Lock()
		if k := c.inactiveIndex(in.Name); k >= 0 {
			c.inactive[k] = Inactive{Name: in.Name, Err: err}
		}
		c.toolsMu.Unlock()
		fmt.Fprintf(c.cfg.Err, "agentapp: error: MCP server %s did not connect: %s\n", textsafe.Escape(in.Name), escapeLines(err.Error()))
		if h := LoginHint(err); h != "" {
			fmt.Fprintf(c.cfg.Err, "log in with: %s\n", textsafe.Escape(h))
		}
		return
	}
	c.toolsMu.Lock()
	if k := c.inactiveIndex(in.Name); k >= 0 {
		c.inactive = slices.Delete(slices.Clone(c.inactive), k, k+1)
	}
	c.cfg.Servers = append(slices.Clone(c.cfg.Servers), s)
	c.rebuildLocked(ctx)
	use := c.live.use(len(c.cfg.Servers)-1, s.Name())
	c.toolsMu.Unlock()
	fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s: connected, %s", s.Name(), use.count())))
}

// rebuildLocked builds the tool table again after the set of running
// servers changed (c.toolsMu held), with the merge policy of the start: a
// clash that start-up would refuse keeps the tool already in the table and
// skips the newcomer with a warning.
func (c *Chat) rebuildLocked(ctx context.Context) {
	gens, err := generations(ctx, c.cfg.Servers)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(err.Error()))
	}
	next, err := buildLive(c.cfg.Local, c.cfg.Servers, c.guards, liveTools{set: c.live.set}, gens)
	if err != nil {
		fmt.Fprintf(c.cfg.Err, "agentapp: warning: the tool table could not be rebuilt, the previous one is kept: %s\n", textsafe.Escape(err.Error()))
		return
	}
	for _, w := range next.report.Warnings {
		if !slices.Contains(c.live.report.Warnings, w) {
			fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(w))
		}
	}
	for _, w := range next.skipped {
		if !slices.Contains(c.live.skipped, w) {
			fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(w))
		}
	}
	c.live = next
}

// Inactive returns the configured servers that are not running, in the
// order of the config.
func (c *Chat) Inactive() []Inactive {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return slices.Clone(c.inactive)
}

// manageServer is /mcp restart|enable|disable NAME.
func (c *Chat) manageServer(ctx context.Context, verb, name string) {
	if name == "" {
		fmt.Fprintf(c.cfg.Out, "Usage: /mcp %s NAME (see /mcp for the names)\n", verb)
		return
	}
	c.toolsMu.Lock()
	running, j := c.serverIndex(name) >= 0, c.inactiveIndex(name)
	c.toolsMu.Unlock()
	switch {
	case verb == "disable":
		c.disableServer(ctx, name)
	case running && verb == "enable":
		fmt.Fprintf(c.cfg.Out, "MCP server %s is already running (/mcp restart %s restarts it).\n", textsafe.Escape(name), textsafe.Escape(name))
	case running:
		c.restartServer(ctx, name)
	case j < 0:
		c.unknownServer(c.cfg.Out, name)
	case verb == "restart" && c.inactive[j].Disabled:
		fmt.Fprintf(c.cfg.Out, "MCP server %s is disabled; start it with /mcp enable %s.\n", textsafe.Escape(name), textsafe.Escape(name))
	default:
		c.startInactive(ctx, j)
	}
}
