package chat

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
)

// currentTools returns the table in use.
func (c *Chat) currentTools() *agent.ToolSet { return c.h.Tools().Current() }

// refreshTools brings the tool table up to date with the servers
// (host.Table.Refresh, which reports changes through notice) and returns
// it.
func (c *Chat) refreshTools(ctx context.Context) *agent.ToolSet { return c.h.Tools().Refresh(ctx) }

// escapeLines escapes each line of s (textsafe) and keeps the line breaks:
// for a message of ours that spans lines on purpose.
func escapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}

// printServers is /mcp: every server with its state and how many of its
// tools are in use. The count is read from the tool table, as /tools lists
// it, not from what the server offers: a tool skipped because of a name
// clash is counted apart, with the reason.
func (c *Chat) printServers(w io.Writer) {
	table := c.h.Tools()
	servers, inactive := table.Servers(), table.Inactive()
	if len(servers) == 0 && len(inactive) == 0 {
		fmt.Fprintln(w, "No MCP servers"+hintIn(c.cfg.Hints.AddServer)+".")
		return
	}
	use := table.Use()
	n := len(servers) + len(inactive)
	fmt.Fprintf(w, "%d MCP %s:\n", n, plural(n, "server", "servers"))
	defer c.printInactive(w, "  ")
	for i, s := range servers {
		var u host.ToolUse
		if i < len(use) {
			u = use[i]
		}
		sv, ok := s.(host.Supervised)
		if !ok {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s: connected, %s", s.Name(), u.Count())))
			continue
		}
		st := sv.Status()
		line := fmt.Sprintf("  %s: %s, %s", s.Name(), st.State, u.Count())
		if st.Restarts > 0 {
			line += fmt.Sprintf(", %d automatic %s in the last minute", st.Restarts, plural(st.Restarts, "restart", "restarts"))
		}
		if st.Detail != "" {
			line += " (" + st.Detail + ")"
		}
		fmt.Fprintln(w, textsafe.Escape(line))
		if st.State == mcpclient.StateDown {
			fmt.Fprintf(w, "    restart it with /mcp restart %s\n", textsafe.Escape(s.Name()))
		}
	}
}

// restartServer is /mcp restart NAME. Ctrl-C cancels it.
func (c *Chat) restartServer(ctx context.Context, name string) {
	out := c.cfg.Out
	if name == "" {
		fmt.Fprintln(out, "Usage: /mcp restart NAME (see /mcp for the names)")
		return
	}
	var target host.Supervised
	var names []string
	for _, s := range c.h.Tools().Servers() {
		names = append(names, s.Name())
		if sv, ok := s.(host.Supervised); ok && s.Name() == name {
			target = sv
		}
	}
	if target == nil {
		if len(names) == 0 {
			fmt.Fprintf(out, "No MCP server is named %s; no servers are connected.\n", textsafe.Escape(name))
		} else {
			fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("No MCP server is named %s; the servers are: %s.", name, strings.Join(names, ", "))))
		}
		return
	}
	ctx, stop := c.interruptible(ctx)
	defer stop()
	fmt.Fprintf(out, "Restarting MCP server %s…\n", textsafe.Escape(name))
	use, err := c.h.Tools().Restart(ctx, name)
	if err != nil {
		// The error may span lines (the server's last stderr lines, each
		// escaped by the bridge); each line is escaped again here.
		fmt.Fprintf(c.cfg.Err, "agentapp: error: restarting MCP server %s failed: %s\n", textsafe.Escape(name), escapeLines(err.Error()))
		return
	}
	st := target.Status()
	fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("MCP server %s: %s, %s", name, st.State, use.Count())))
}
