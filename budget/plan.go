package budget

import (
	"fmt"

	"github.com/agentapp/agentapp/model"
)

// PlanInput is one request to plan, part by part.
type PlanInput struct {
	// Window is the model's context window in tokens (see Window).
	Window int
	// Reply is the room kept for the reply; 0 means DefaultReply, or an
	// eighth of the window when that is smaller.
	Reply int
	// System is the system prompt.
	System string
	// Tools are the tool definitions the request would carry.
	Tools []model.ToolSpec
	// Summary is the summary of turns folded earlier, sent ahead of the
	// history.
	Summary string
	// History is the conversation so far, oldest first.
	History []model.Message
	// HistoryTokens, when the caller keeps them, are the estimates of
	// History's messages (Estimator.MessageTokens): the history is
	// planned on them instead of being counted again on every request.
	// Nil, or a length other than History's, means count here.
	HistoryTokens []int
	// New is what this turn adds: the user's message.
	New []model.Message
	// SummaryReserve is the room kept for a new summary when history
	// must be folded; 0 means DefaultSummaryReserve.
	SummaryReserve int
	// Calibrator, when set, scales every estimate by what the provider
	// reported for earlier requests.
	Calibrator *Calibrator
}

// Defaults of PlanInput.
const (
	DefaultReply          = 4096
	DefaultSummaryReserve = 1024
)

// Plan says how a request fits a window.
type Plan struct {
	Window, Reply int
	// The estimated tokens of each part as given.
	System, Tools, Summary, History, New int
	// HistoryBudget is what is left for history after the fixed parts,
	// the reply and (when folding) the summary's reserve.
	HistoryBudget int
	// Selection splits the history into a part to fold and a part to send.
	Selection
	// Fold reports that History[:KeepFrom] must be folded into the summary
	// before the request is sent.
	Fold bool
	// Total is the estimate of the request as planned: fixed parts, the
	// kept history, the summary (or its reserve when folding) and the reply.
	Total int
	// Fits reports that Total is within Window.
	Fits bool
	// Problems say, for the user, what does not fit and what would help;
	// empty when the plan fits.
	Problems []string
}

// ToolShare returns the share of the window the tool definitions take.
func (p Plan) ToolShare() float64 {
	if p.Window <= 0 {
		return 0
	}
	return float64(p.Tools) / float64(p.Window)
}

// Plan estimates each part of a request and chooses the history that fits:
// the fixed parts (system prompt, tools, summary, new message) and the
// reply's room come first, the latest turns take what is left, and older
// turns are marked to fold. When even the fixed parts do not fit, the plan
// says which is the largest, so the host can defer tools or refuse the
// message with a reason rather than send a request the provider will reject.
func (e *Estimator) Plan(in PlanInput) Plan {
	adj := func(n int) int {
		if in.Calibrator != nil {
			return in.Calibrator.Adjust(n)
		}
		return n
	}
	p := Plan{Window: in.Window, Reply: in.Reply}
	if p.Reply <= 0 {
		p.Reply = DefaultReply
		if in.Window > 0 && in.Window/8 < p.Reply {
			p.Reply = in.Window / 8
		}
	}
	if in.System != "" {
		p.System = adj(e.Message(model.Message{Role: model.RoleSystem, Content: in.System}))
	}
	p.Tools = adj(e.Tools(in.Tools))
	if in.Summary != "" {
		p.Summary = adj(e.Message(model.Message{Role: model.RoleSystem, Content: in.Summary}))
	}
	costs := in.HistoryTokens
	if len(costs) != len(in.History) {
		costs = e.MessageTokens(in.History)
	}
	rawHistory := 0
	for _, c := range costs {
		rawHistory += c
	}
	p.History = adj(rawHistory)
	p.New = adj(e.Messages(in.New) + replyOverhead)
	fixed := p.System + p.Tools + p.Summary + p.New + p.Reply
	reserve := in.SummaryReserve
	if reserve <= 0 {
		reserve = DefaultSummaryReserve
	}
	if fixed+p.History <= in.Window {
		p.HistoryBudget = in.Window - fixed
		p.Selection = Selection{KeepFrom: 0, Kept: p.History}
		// SelectHistory still runs: a history that starts with a
		// broken tool group must be folded even when it would fit.
		sel := e.SelectHistoryCounted(in.History, costs, max(0, unadjust(in.Calibrator, p.HistoryBudget)))
		if sel.KeepFrom > 0 {
			p.Selection = Selection{KeepFrom: sel.KeepFrom, Kept: adj(sel.Kept), Folded: adj(sel.Folded)}
		}
	} else {
		p.HistoryBudget = max(0, in.Window-fixed-max(0, reserve-p.Summary))
		sel := e.SelectHistoryCounted(in.History, costs, unadjust(in.Calibrator, p.HistoryBudget))
		p.Selection = Selection{KeepFrom: sel.KeepFrom, Kept: adj(sel.Kept), Folded: adj(sel.Folded)}
	}
	p.Fold = p.KeepFrom > 0
	p.Total = fixed + p.Kept
	if p.Fold {
		p.Total += max(0, reserve-p.Summary)
	}
	p.Fits = p.Total <= in.Window
	if !p.Fits {
		p.Problems = append(p.Problems, fmt.Sprintf("the request needs about %d tokens, more than the window of %d, even with the history folded", p.Total, in.Window))
		parts := []struct {
			name string
			n    int
			hint string
		}{
			{"the tool definitions", p.Tools, "defer them behind tool search or connect fewer servers"},
			{"the new message", p.New, "send a shorter message or attach the text as a file"},
			{"the system prompt", p.System, "shorten the system prompt or the server instructions"},
			{"the room kept for the reply", p.Reply, "lower the reply's token limit"},
			{"the summary of earlier turns", p.Summary, "start a new session"},
		}
		big := 0
		for i, x := range parts {
			if x.n > parts[big].n {
				big = i
			}
		}
		x := parts[big]
		p.Problems = append(p.Problems, fmt.Sprintf("the largest part is %s, about %d tokens (%.0f%% of the window): %s", x.name, x.n, 100*float64(x.n)/float64(max(1, in.Window)), x.hint))
	}
	return p
}

// unadjust turns a calibrated budget back into raw estimate units, for
// SelectHistory, which counts raw estimates.
func unadjust(c *Calibrator, n int) int {
	r, _ := c.Ratio()
	return int(float64(n) / r)
}
