package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentapp/agentapp/internal/textsafe"
	mcpskills "github.com/agentapp/agentapp/mcpclient/skills"
)

// skillsCommand is /skills (list the running servers' skills: server,
// name, description, whether loaded) and /skills show SERVER NAME (read,
// verify and show one skill's SKILL.md to the user; the model does not
// get it this way).
func (c *Chat) skillsCommand(ctx context.Context, w io.Writer, args []string) {
	switch {
	case len(args) == 0:
		c.refreshTools(ctx)
		c.printSkills(w)
	case len(args) == 3 && strings.EqualFold(args[0], "show"):
		ld, err := c.h.Tools().LoadSkill(ctx, args[1], args[2])
		var ve *mcpskills.VerifyError
		switch {
		case errors.As(err, &ve):
			fmt.Fprintln(w, textsafe.Escape(err.Error()))
		case err != nil:
			fmt.Fprintf(w, "Could not show the skill: %s\n", textsafe.Escape(err.Error()))
		default:
			fmt.Fprintf(w, "Skill %s of MCP server %s (%s), verified against its entry:\n", textsafe.Escape(ld.Skill.Name), textsafe.Escape(ld.Skill.Server), textsafe.Escape(ld.Skill.Entry.URI))
			fmt.Fprintln(w, escapeLines(strings.TrimSuffix(string(ld.File), "\n")))
		}
	default:
		fmt.Fprintln(w, "Usage: /skills (list the MCP servers' skills) or /skills show SERVER NAME (show one, verified)")
	}
}

// printSkills is the list of /skills.
func (c *Chat) printSkills(w io.Writer) {
	skills := c.h.Tools().Skills()
	if len(skills) == 0 {
		fmt.Fprintln(w, "No MCP server publishes skills.")
		return
	}
	cols := termWidth(w)
	if cols <= 0 {
		cols = 100
	}
	fmt.Fprintf(w, "%d %s (the model loads one with loadSkill, which you approve):\n", len(skills), plural(len(skills), "skill", "skills"))
	labels := make([]string, len(skills))
	pad := 0
	for i, k := range skills {
		labels[i] = textsafe.Escape(k.Server) + ": " + textsafe.Escape(k.Name)
		if k.Loaded {
			labels[i] += " (loaded)"
		}
		pad = max(pad, displayWidth(labels[i]))
	}
	for i, k := range skills {
		// The descriptions start in one column, as /tools aligns its own.
		line := "  " + labels[i] + strings.Repeat(" ", pad-displayWidth(labels[i])) + "  " + textsafe.Escape(k.Description)
		fmt.Fprintln(w, cutToWidth(line, cols-1))
	}
}
