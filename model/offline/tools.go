package offline

import (
	"strings"

	"github.com/agentapp/agentapp/assistant/toolnames"
	"github.com/agentapp/agentapp/model"
)

// The tool names the model knows, as the assistant names its tools. Our MCP
// server publishes the knowledge-base search as searchKnowledge; locally it
// is searchKnowledgeBase.
const (
	toolOrder    = toolnames.OrderStatus
	toolTicket   = toolnames.CreateTicket
	toolHuman    = toolnames.Escalate
	toolKB       = toolnames.SearchKB
	toolKBRemote = toolnames.SearchKBRemote
)

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
func kindOf(name string) kind {
	switch {
	case nameMatch(name, toolOrder) > 0:
		return kindOrder
	case nameMatch(name, toolTicket) > 0:
		return kindTicket
	case nameMatch(name, toolHuman) > 0:
		return kindHuman
	case nameMatch(name, toolKB) > 0, nameMatch(name, toolKBRemote) > 0:
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
