package offline

import (
	"strings"

	"github.com/agentapp/agentapp/model"
)

// Tools names the tools the model knows how to call. The caller gives the
// names its tools have (cmd/agentapp gives the assistant's), so this
// package knows no domain's spelling; a name left empty is a tool the
// model never finds.
type Tools struct {
	// Order looks an order up by its id.
	Order string
	// Ticket opens an after-sales ticket.
	Ticket string
	// Handoff hands the conversation to a human.
	Handoff string
	// Search is the knowledge-base search; SearchRemote the same search
	// as an MCP server publishes it, when its name differs.
	Search, SearchRemote string
}

// kind is what a tool does, whatever prefix its name carries.
type kind int

const (
	kindOther kind = iota
	kindOrder
	kindTicket
	kindHuman
	kindKB
)

// kindOf classifies a tool name, so results of prefixed MCP tools are read
// the same way as those of local tools.
func kindOf(t Tools, name string) kind {
	switch {
	case nameMatch(name, t.Order) > 0:
		return kindOrder
	case nameMatch(name, t.Ticket) > 0:
		return kindTicket
	case nameMatch(name, t.Handoff) > 0:
		return kindHuman
	case nameMatch(name, t.Search) > 0, nameMatch(name, t.SearchRemote) > 0:
		return kindKB
	}
	return kindOther
}

// nameMatch rates how well a tool name matches a wanted name: 3 for the exact
// name, 2 for the same name in another case, 1 for the wanted name after a
// prefix and a separator (_ . - / and so __), 0 for no match.
func nameMatch(name, want string) int {
	switch {
	case name == want:
		return 3
	case strings.EqualFold(name, want):
		return 2
	case len(name) > len(want) && strings.EqualFold(name[len(name)-len(want):], want):
		switch name[len(name)-len(want)-1] {
		case '_', '.', '-', '/', ':':
			return 1
		}
	}
	return 0
}

// findTool returns the name of the offered tool that best matches the wanted
// names, which are in order of preference: a better match of an earlier name
// wins, and among equal matches the first offered tool. It returns "" when
// nothing matches.
func findTool(tools []model.ToolSpec, wants ...string) string {
	best, bestRank := "", 0
	for wi, want := range wants {
		for _, t := range tools {
			// Rank exactness first, then the preference order of wants.
			rank := nameMatch(t.Name, want)*len(wants) + (len(wants) - wi)
			if nameMatch(t.Name, want) > 0 && rank > bestRank {
				best, bestRank = t.Name, rank
			}
		}
	}
	return best
}
