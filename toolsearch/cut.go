package toolsearch

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
)

// MaxTextBytes bounds a tool description and a server's instructions: a
// server may not spend the model's context on one tool's essay, and every
// request carries the instructions.
const MaxTextBytes = 2048

// CutText cuts text to MaxTextBytes (on a character boundary, at a line or
// sentence end when one is near) and marks the cut. When it cut, warning
// names the server and what was cut, for the host's log and /tools; it is
// "" otherwise. what is e.g. "the description of tool read_file" or "the
// instructions".
func CutText(server, what, text string) (cut, warning string) {
	if len(text) <= MaxTextBytes {
		return text, ""
	}
	mark := fmt.Sprintf(" …[cut at %d of %d bytes]", MaxTextBytes, len(text))
	n := MaxTextBytes - len(mark)
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	if i := strings.LastIndexAny(text[:n], "\n."); i >= n*3/4 {
		n = i + 1
	}
	if server == "" {
		server = "(local)"
	}
	return strings.ToValidUTF8(text[:n], "\uFFFD") + mark,
		fmt.Sprintf("server %s: %s is %d bytes; cut to %d", server, what, len(text), MaxTextBytes)
}

// CutTools cuts the descriptions of tools over MaxTextBytes in place and
// returns a warning per tool cut. The host calls it when a server's tools
// are listed, before they are offered or indexed.
func CutTools(tools []*agent.Tool) []string {
	var warnings []string
	for _, t := range tools {
		if t == nil {
			continue
		}
		d, w := CutText(t.Origin, "the description of tool "+t.Name, t.Description)
		if w != "" {
			t.Description = d
			warnings = append(warnings, w)
		}
	}
	return warnings
}
