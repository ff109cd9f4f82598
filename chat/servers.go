package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
)

// The states of a configured server that is not running (host.ServerState).
const (
	StateFailed     = host.StateFailed
	StateDisabled   = host.StateDisabled
	StateNeedsLogin = host.StateNeedsLogin
)

// LoginHint returns the command that logs in to a server that refused the
// connection for want of a login, or "" (host.LoginHint).
func LoginHint(err error) string { return host.LoginHint(err) }

// describe is the state and the reason, as one line for the banner and
// /mcp: "failed: connection refused", "needs login: run agentapp mcp login
// x", "disabled (...)".
func describe(in host.Inactive) string {
	switch st := in.State(); st {
	case StateDisabled:
		if in.DisabledBy != "" {
			return "disabled in " + in.DisabledBy
		}
		return "disabled (enable it with /mcp enable " + in.Name + ")"
	case StateNeedsLogin:
		return "needs login: " + LoginHint(in.Err)
	default:
		return "failed: " + failureLine(in.Err)
	}
}

// failureLine is why a server failed, on one line: the first line of the
// error (which server, when, how) and the decisive lines of the server's
// stderr (mcpclient.FailureReason: "FATAL: DATABASE_URL is not set"),
// which say more than the "EOF" the connection ended with. Other lines
// are marked "…"; /mcp shows them.
func failureLine(err error) string {
	if err == nil {
		return "no reason given"
	}
	head, _, more := strings.Cut(err.Error(), "\n")
	if why := mcpclient.FailureReason(err); len(why) > 0 {
		return head + " — its stderr says: " + strings.Join(why, " … ")
	}
	if more {
		head += " …"
	}
	return head
}

// firstLine is the first line of s, marked when there was more (the
// server's stderr tail, say, which /mcp restart shows in full).
func firstLine(s string) string {
	if l, _, ok := strings.Cut(s, "\n"); ok {
		return l + " …"
	}
	return s
}

// inactive returns the inactive server called name.
func (c *Chat) inactive(name string) (host.Inactive, bool) {
	all := c.h.Tools().Inactive()
	i := slices.IndexFunc(all, func(in host.Inactive) bool { return in.Name == name })
	if i < 0 {
		return host.Inactive{}, false
	}
	return all[i], true
}

// running reports whether a server called name runs.
func (c *Chat) running(name string) bool {
	return slices.ContainsFunc(c.h.Tools().Servers(), func(s host.Server) bool { return s.Name() == name })
}

// serverNames lists every configured server, running or not, for the
// message that a name is unknown.
func (c *Chat) serverNames() []string {
	var names []string
	for _, s := range c.h.Tools().Servers() {
		names = append(names, s.Name())
	}
	for _, in := range c.h.Tools().Inactive() {
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
	for _, in := range c.h.Tools().Inactive() {
		if indent == "" {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("MCP server %s: %s", in.Name, describe(in))))
			continue
		}
		if in.State() == StateFailed && in.Err != nil {
			// /mcp is where the user asks for detail: the whole reason,
			// the server's stderr lines included.
			head, rest, _ := strings.Cut(in.Err.Error(), "\n")
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("%s%s: failed: %s", indent, in.Name, head)))
			for _, l := range strings.Split(rest, "\n") {
				if strings.TrimSpace(l) != "" {
					fmt.Fprintln(w, "    "+textsafe.Escape(l))
				}
			}
		} else {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("%s%s: %s", indent, in.Name, describe(in))))
		}
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
	if !c.running(name) {
		if in, ok := c.inactive(name); ok {
			fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s is not running (%s).", name, describe(in))))
			return
		}
		c.unknownServer(out, name)
		return
	}
	closeErr, err := c.h.Tools().Disable(ctx, name)
	if err != nil {
		c.unknownServer(out, name)
		return
	}
	if closeErr != nil {
		fmt.Fprintf(c.cfg.Err, "agentapp: warning: %s\n", escapeLines(closeErr.Error()))
	}
	fmt.Fprintf(out, "MCP server %s disabled for this chat; its tools are no longer offered (/mcp enable %s brings it back).\n", textsafe.Escape(name), textsafe.Escape(name))
}

// startInactive is /mcp enable NAME, and /mcp restart NAME of a server that
// failed: it connects the server and merges its tools in.
func (c *Chat) startInactive(ctx context.Context, in host.Inactive) {
	out := c.cfg.Out
	if in.Disabled && in.DisabledBy != "" {
		fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s is disabled in %s; set \"disabled\": false there (or remove the field) and start the chat again.", in.Name, in.DisabledBy)))
		return
	}
	ctx, stop := c.interruptible(ctx)
	defer stop()
	fmt.Fprintf(out, "Connecting MCP server %s…\n", textsafe.Escape(in.Name))
	use, err := c.h.Tools().Enable(ctx, in.Name)
	if errors.Is(err, host.ErrCannotConnect) {
		fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s cannot be started from this chat; start the chat again to retry it.", in.Name)))
		return
	}
	if err != nil {
		fmt.Fprintf(c.cfg.Err, "agentapp: error: MCP server %s did not connect: %s\n", textsafe.Escape(in.Name), escapeLines(err.Error()))
		if h := LoginHint(err); h != "" {
			fmt.Fprintf(c.cfg.Err, "log in with: %s\n", textsafe.Escape(h))
		}
		return
	}
	fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s: connected, %s", in.Name, use.Count())))
}

// Inactive returns the configured servers that are not running, in the
// order of the config.
func (c *Chat) Inactive() []host.Inactive { return c.h.Tools().Inactive() }

// manageServer is /mcp restart|enable|disable NAME.
func (c *Chat) manageServer(ctx context.Context, verb, name string) {
	if name == "" {
		fmt.Fprintf(c.cfg.Out, "Usage: /mcp %s NAME (see /mcp for the names)\n", verb)
		return
	}
	running := c.running(name)
	in, isInactive := c.inactive(name)
	switch {
	case verb == "disable":
		c.disableServer(ctx, name)
	case running && verb == "enable":
		fmt.Fprintf(c.cfg.Out, "MCP server %s is already running (/mcp restart %s restarts it).\n", textsafe.Escape(name), textsafe.Escape(name))
	case running:
		c.restartServer(ctx, name)
	case !isInactive:
		c.unknownServer(c.cfg.Out, name)
	case verb == "restart" && in.Disabled:
		fmt.Fprintf(c.cfg.Out, "MCP server %s is disabled; start it with /mcp enable %s.\n", textsafe.Escape(name), textsafe.Escape(name))
	default:
		c.startInactive(ctx, in)
	}
}
