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
	// cost is the unit's estimated tokens.
	cost int
}

// units splits msgs into units, adding each unit's tokens (the sum of
// its messages' in tokens) to cost.
func units(msgs []model.Message, tokens []int) []unit {
	out := make([]unit, 0, len(msgs)/2+1)
	for i := 0; i < len(msgs); {
		m := msgs[i]
		u := unit{start: i, end: i + 1, turn: m.Role == model.RoleUser}
		switch {
		case m.Role == model.RoleAssistant && len(m.ToolCalls) > 0:
			answered := 0
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool && callsHave(m.ToolCalls, msgs[u.end].ToolCallID) {
				answered++
				u.end++
			}
			// Calls without their results cannot be sent either.
			u.orphan = answered < distinctIDs(m.ToolCalls)
		case m.Role == model.RoleTool:
			u.orphan = true
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool {
				u.end++
			}
		}
		for _, c := range tokens[u.start:u.end] {
			u.cost += c
		}
		out = append(out, u)
		i = u.end
	}
	return out
}

// callsHave reports whether one of calls has the id. A message carries a
// few calls, so a scan is cheaper than a set.
func callsHave(calls []model.ToolCall, id string) bool {
	for _, c := range calls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// distinctIDs counts the different ids of calls.
func distinctIDs(calls []model.ToolCall) int {
	n := 0
	for i, c := range calls {
		if !callsHave(calls[:i], c.ID) {
			n++
		}
	}
	return n
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
	us := units(msgs, tokens)
	total := 0
	for _, u := range us {
		total += u.cost
	}
	keep := len(us) // the first unit kept
	turnKeep := -1  // the earliest kept unit that starts a turn
	used := 0
	for i := len(us) - 1; i >= 0; i-- {
		if us[i].orphan || used+us[i].cost > budget {
			break
		}
		used += us[i].cost
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
		sel.Kept += us[i].cost
	}
	sel.Folded = total - sel.Kept
	return sel
}
