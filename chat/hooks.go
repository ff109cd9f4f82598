package chat

import (
	"fmt"
	"io"

	"github.com/agentapp/agentapp/hooks"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// hooksCommand is /hooks: the hooks in force, by event, each with its
// matcher, command, timeout and the file it comes from.
func (c *Chat) hooksCommand(out io.Writer) {
	cfg := c.h.Hooks()
	if cfg.Len() == 0 {
		fmt.Fprintln(out, `No hooks. Add a "hooks" object to agentapp.json or another config file (see the Hooks section of docs/permissions.md).`)
		return
	}
	for _, ev := range hooks.Events {
		for _, m := range cfg[ev] {
			matcher := m.Pattern
			if matcher == "" {
				matcher = "*"
			}
			for _, h := range m.Hooks {
				fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("%s [%s] %s (timeout %v) from %s", ev, matcher, h.Command, h.Timeout, h.Source)))
			}
		}
	}
}
