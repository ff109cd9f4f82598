package chat

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/agentapp/agentapp/internal/textsafe"
)

// maxListedDeferred bounds the deferred tools /tools names one by one.
const maxListedDeferred = 30

// printToolSearch says, under /tools, whether the MCP tools are deferred
// behind searchTools, and which of them this session has loaded.
func (c *Chat) printToolSearch(ctx context.Context, w io.Writer) {
	st := c.h.ToolSearch(ctx, c.session)
	if !st.Deferred {
		// The reason may say tool search is on (with nothing to defer):
		// the line does not call it off.
		fmt.Fprintf(w, "Tool search: every tool is offered to the model (%s).\n", textsafe.Escape(st.Reason))
		return
	}
	fmt.Fprintf(w, "Tool search: on (%s). The model is offered the local tools (or the MCP tools that replaced them), searchTools and the tools it loaded.\n", textsafe.Escape(st.Reason))
	fmt.Fprintf(w, "  loaded in this session (%d): %s\n", len(st.Loaded), nameList(st.Loaded, len(st.Loaded)))
	fmt.Fprintf(w, "  deferred, found by searchTools (%d): %s\n", len(st.Waiting), nameList(st.Waiting, maxListedDeferred))
}

func nameList(names []string, n int) string {
	if len(names) == 0 {
		return "none"
	}
	s := strings.Join(names[:min(n, len(names))], ", ")
	if len(names) > n {
		s += fmt.Sprintf(", … and %d more", len(names)-n)
	}
	return textsafe.Escape(s)
}

// toolsCommand is /tools with arguments: "unload NAME" removes a tool
// searchTools loaded from this session, so later requests no longer
// carry its definition (a search loads it again).
func (c *Chat) toolsCommand(ctx context.Context, w io.Writer, args []string) {
	if len(args) != 2 || strings.ToLower(args[0]) != "unload" {
		fmt.Fprintln(w, "Usage: /tools (list the tools) or /tools unload NAME (stop offering a tool searchTools loaded)")
		return
	}
	if err := c.h.UnloadTool(ctx, c.session, args[1]); err != nil {
		fmt.Fprintf(w, "Cannot unload: %s\n", textsafe.Escape(err.Error()))
		return
	}
	fmt.Fprintf(w, "Unloaded %s: the model is no longer offered it in this session (searchTools can load it again).\n", textsafe.Escape(args[1]))
}
