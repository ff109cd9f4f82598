package budget

import "github.com/agentapp/agentapp/model"

// unit is a run of history messages that must stay together: one message,
// or an assistant message with tool calls and the tool messages answering
// them. A provider rejects a tool message whose call is not in the request,
// and a call without its result leaves the model to guess what happened.
type unit struct {
	start, end int // History[start:end]
	// orphan is a tool message with no call before it, or calls missing
	// some of their results (history that was already cut badly): it can
	// never be sent, only folded.
	orphan bool
	// turn reports that the unit starts with a user message: a good place
	// for the verbatim part of the history to begin.
	turn bool
}

// units splits msgs into units.
func units(msgs []model.Message) []unit {
	var out []unit
	for i := 0; i < len(msgs); {
		m := msgs[i]
		u := unit{start: i, end: i + 1, turn: m.Role == model.RoleUser}
		switch {
		case m.Role == model.RoleAssistant && len(m.ToolCalls) > 0:
			ids := make(map[string]bool, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				ids[c.ID] = true
			}
			answered := 0
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool && ids[msgs[u.end].ToolCallID] {
				answered++
				u.end++
			}
			// Calls without their results cannot be sent either.
			u.orphan = answered < len(ids)
		case m.Role == model.RoleTool:
			u.orphan = true
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool {
				u.end++
			}
		}
		out = append(out, u)
		i = u.end
	}
	return out
}

// Selection is the split of a history into a part to fold and a part to
// send verbatim.
type Selection struct {
	// KeepFrom is the index of the first message sent verbatim:
	// History[KeepFrom:] is sent as it is, History[:KeepFrom] must be
	// folded into the summary. It is never inside a tool call's group, and
	// History[KeepFrom] is never a tool message.
	KeepFrom int
	// Kept and Folded are the estimated tokens of the two parts.
	Kept, Folded int
}

// SelectHistory chooses the latest messages that fit in budget tokens.
// It prefers to start the verbatim part at a user message, so the model
// sees whole turns; when even the latest turn does not fit it starts at
// the latest tool-call group or message that does, and when nothing fits
// everything is folded (KeepFrom == len(msgs)).
func (e *Estimator) SelectHistory(msgs []model.Message, budget int) Selection {
	return e.SelectHistoryCounted(msgs, nil, budget)
}

// SelectHistoryCounted is SelectHistory for a caller that keeps the
// estimates of msgs (tokens[i] is Message(msgs[i])); nil, or a length
// other than msgs', means count here.
func (e *Estimator) SelectHistoryCounted(msgs []model.Message, tokens []int, budget int) Selection {
	if len(tokens) != len(msgs) {
		tokens = e.MessageTokens(msgs)
	}
	us := units(msgs)
	cost := make([]int, len(us))
	total := 0
	for i, u := range us {
		for _, c := range tokens[u.start:u.end] {
			cost[i] += c
		}
		total += cost[i]
	}
	keep := len(us) // the first unit kept
	turnKeep := -1  // the earliest kept unit that starts a turn
	used := 0
	for i := len(us) - 1; i >= 0; i-- {
		if us[i].orphan || used+cost[i] > budget {
			break
		}
		used += cost[i]
		keep = i
		if us[i].turn {
			turnKeep = i
		}
	}
	if turnKeep >= 0 {
		keep = turnKeep
	}
	sel := Selection{KeepFrom: len(msgs)}
	if keep < len(us) {
		sel.KeepFrom = us[keep].start
	}
	for i := keep; i < len(us); i++ {
		sel.Kept += cost[i]
	}
	sel.Folded = total - sel.Kept
	return sel
}
