package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
)

// ContextOptions size the model's context. The zero value means the
// defaults.
type ContextOptions struct {
	// Window is the model's context window in tokens; 0 means the known
	// window of the model's name (budget.LookupModel), or
	// budget.DefaultWindow for a model the table does not know.
	Window int
	// Reply is the room kept for the reply; 0 means budget's default.
	Reply int
	// Summarizer folds older turns into a summary; nil asks the model,
	// with budget.Extractive when that call fails. A model that cannot
	// summarize (the offline one) is given budget.Extractive here.
	Summarizer budget.Summarizer
}

// ContextError is a request that does not fit the model's context window
// even with every earlier turn folded. Nothing of the turn is stored.
type ContextError struct {
	Window int
	// Problems say what does not fit and which part is the largest.
	Problems []string
	// Hint follows "or" (Hints.ContextWindow); empty adds nothing.
	Hint string
	// Unloaded are the tools searchTools had loaded in the session,
	// unloaded when the request did not fit.
	Unloaded []string
}

func (e *ContextError) Error() string {
	msg := "the request does not fit the model's context window of " + fmt.Sprint(e.Window) + " tokens: " + strings.Join(e.Problems, "; ")
	if e.Hint != "" {
		msg += "; or " + e.Hint
	}
	if len(e.Unloaded) > 0 {
		msg += "; the tools loaded in this session (" + quoteList(e.Unloaded) + ") were unloaded, so send the message again (searchTools loads a tool again when it is needed)"
	}
	return msg + " (nothing was stored)"
}

// initContext sets up the host's token accounting for its model.
func (h *Host) initContext() {
	info := budget.LookupModel(h.cfg.Model.Name())
	h.window = budget.Window(h.cfg.Model.Name(), h.cfg.Context.Window)
	// The memo spares re-counting the tool definitions and long texts
	// (system prompt, tool results) that every request of a turn repeats.
	h.est = budget.NewEstimator(info.Family).WithMemo(budget.NewMemo(nil))
	h.cal = budget.NewCalibrator(nil)
}

// ContextWindow returns the window the host plans every request against.
func (h *Host) ContextWindow() int { return h.window }

// summaryReserve is the room kept for the summary of folded turns.
func (h *Host) summaryReserve() int {
	return max(64, min(budget.DefaultSummaryReserve, h.window/8))
}

// withSummary is the system prompt with the summary of folded turns.
func withSummary(system, summary string) string {
	if summary == "" {
		return system
	}
	s := "Summary of the earlier part of this conversation (older turns were folded to fit the context window):\n" + summary
	if system == "" {
		return s
	}
	return system + "\n\n" + s
}

// planner is the model of one turn as the loop sees it: before each call
// it plans the request against the window, folding older turns into the
// summary when the history has outgrown its share, and after each call it
// counts the tokens.
type planner struct {
	model.Model
	h *Host
	// session is the stored session whose view this is; "" for a
	// conversation that is not stored.
	session string
	// v is the view the turn started with: every request's messages begin
	// with v.msgs, followed by what the turn added.
	v      view
	folded int // v.msgs[:folded] are in v.summary now
	// onReply, when set, sees each reply before the engine acts on it
	// (tool search loads a deferred tool the model called by name).
	onReply func(context.Context, *model.Response) *model.Response

	// cache, for a conversation that is not stored, keeps the summaries
	// of its folded prefixes across requests (Turn.Summaries); keys[i]
	// is the key of v.msgs[:i].
	cache SummaryCache
	keys  []string

	mu    sync.Mutex
	usage Usage
	// usageKept says the usage was stored with the turn (keepUsage
	// stores it otherwise).
	usageKept bool
}

func (p *planner) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	send, err := p.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	r, err := p.Model.Generate(ctx, send)
	p.count("answer", send, r)
	return p.replied(ctx, r, err)
}

func (p *planner) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	send, err := p.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	r, err := p.Model.Stream(ctx, send, onText)
	p.count("answer", send, r)
	return p.replied(ctx, r, err)
}

// replied passes a successful reply through onReply.
func (p *planner) replied(ctx context.Context, r *model.Response, err error) (*model.Response, error) {
	if err == nil && r != nil && p.onReply != nil {
		r = p.onReply(ctx, r)
	}
	return r, err
}

// count measures a call of req, as prepare returned it: its messages
// start with the unfolded view, whose estimates the planner keeps.
func (p *planner) count(purpose string, req *model.Request, r *model.Response) {
	if r == nil {
		return
	}
	c := p.h.measure(purpose, p.h.est.RequestCounted(req, p.v.tokens[p.folded:]), r)
	p.mu.Lock()
	p.usage.add(c)
	p.mu.Unlock()
}

func (p *planner) total() Usage {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.usage
	u.Calls = append([]CallUsage(nil), u.Calls...)
	return u
}

// maxFoldsPerCall bounds the folds before one call: each fold makes room,
// so more than a few means the plan cannot converge.
const maxFoldsPerCall = 3

// prepare plans req and returns what to send: the summary in the system
// prompt and the history after the folded part.
func (p *planner) prepare(ctx context.Context, req *model.Request) (*model.Request, error) {
	h := p.h
	nHist := len(p.v.msgs)
	if nHist > len(req.Messages) { // cannot happen: the loop only appends
		return nil, errors.New("host: the loop's request lost part of the history")
	}
	if len(p.v.tokens) != nHist { // a conversation not read from the store
		p.v.tokens = h.est.MessageTokens(p.v.msgs)
	}
	for range maxFoldsPerCall + 1 {
		plan := h.est.Plan(budget.PlanInput{
			Window: h.window, Reply: h.cfg.Context.Reply, System: req.System, Tools: req.Tools,
			Summary: p.v.summary, History: req.Messages[p.folded:nHist], HistoryTokens: p.v.tokens[p.folded:], New: req.Messages[nHist:],
			SummaryReserve: h.summaryReserve(), Calibrator: h.cal,
		})
		if !plan.Fits {
			return nil, &ContextError{Window: h.window, Problems: plan.Problems, Hint: h.cfg.Hints.ContextWindow}
		}
		if !plan.Fold {
			send := *req
			send.System = withSummary(req.System, p.v.summary)
			send.Messages = req.Messages[p.folded:]
			return &send, nil
		}
		// Fold down to half the history's share, not just enough for
		// this call: each fold costs a model call, and a history folded
		// only to the brim would fold again on the next turn.
		keep := plan.KeepFrom
		r, _ := h.cal.Ratio()
		hist := req.Messages[p.folded:nHist]
		if sel := h.est.SelectHistoryCounted(hist, p.v.tokens[p.folded:], int(float64(plan.HistoryBudget)/2/r)); sel.KeepFrom > keep {
			keep = sel.KeepFrom
		}
		if err := p.fold(ctx, keep); err != nil {
			return nil, err
		}
	}
	return nil, &ContextError{Window: h.window, Problems: []string{fmt.Sprintf("the history still does not fit after %d folds", maxFoldsPerCall)}, Hint: h.cfg.Hints.ContextWindow}
}

// fold folds the next n unfolded messages of the view into the summary and
// stores it with the session.
func (p *planner) fold(ctx context.Context, n int) error {
	msgs := p.v.msgs[p.folded : p.folded+n]
	summary, calls := p.h.summarize(ctx, p.v.summary, msgs)
	p.mu.Lock()
	for _, c := range calls {
		p.usage.add(c)
	}
	p.mu.Unlock()
	p.v.summary = summary
	p.folded += n
	if p.cache != nil && p.session == "" && p.folded < len(p.keys) {
		p.cache.Put(p.keys[p.folded], summary)
	}
	if rt := turnFrom(ctx); rt != nil {
		rt.mu.Lock()
		step := rt.step
		rt.mu.Unlock()
		kept := 0
		for _, m := range p.v.msgs[p.folded:] {
			if m.Role == model.RoleUser {
				kept++
			}
		}
		rt.emit(Event{Kind: EventFold, Step: step, Fold: &Fold{Messages: n, Tokens: p.h.est.Messages(msgs),
			SummaryTokens: p.h.est.Text(summary), Window: p.h.window, KeptTurns: kept, Summary: summary}})
	}
	if p.session != "" && len(p.v.seqs) == len(p.v.msgs) {
		if err := p.h.sessions.s.saveFold(ctx, p.session, summary, p.v.seqs[p.folded-1]); err != nil {
			return err
		}
	}
	return nil
}

// Fold is what one fold did, for the front ends to show: the model's view
// lost these messages to the summary (the transcript keeps them).
type Fold struct {
	// Messages is how many messages were folded.
	Messages int `json:"messages"`
	// Tokens is the folded messages' estimated size.
	Tokens int `json:"tokens"`
	// SummaryTokens is the summary's estimated size afterwards.
	SummaryTokens int `json:"summaryTokens"`
	// Window is the context window planned against.
	Window int `json:"window"`
	// KeptTurns counts the user messages of the history still sent
	// verbatim before the turn's own: a page places its marker of the
	// fold before those turns.
	KeptTurns int `json:"keptTurns"`
	// Summary is the summary now, for a front end that shows it on
	// request; the JSON outputs leave it out, as it can be long.
	Summary string `json:"-"`
}

// summaryPrompt asks the model for a summary of folded turns.
const summaryPrompt = `You fold the older part of a conversation into a summary that replaces it in later requests. Write in the conversation's language. Keep what later questions may refer back to: what the user asked and decided, the answers given, and every identifier, number, date, amount, name and address exactly as written. Drop greetings and repetition. Start from the earlier summary, if any, and fold the new turns into it. Answer with the summary only, as short lines.`

// maxTranscriptRunes bounds one message in the transcript the summarizing
// call reads: a long tool result is cut, its facts usually come first.
const maxTranscriptRunes = 2000

// summarize folds msgs into previous: with the configured summarizer, or
// with the model, falling back to the extractive summary when the model's
// call fails, answers nothing or too much, or the transcript does not fit
// its window. It returns the usage of the model calls it made.
func (h *Host) summarize(ctx context.Context, previous string, msgs []model.Message) (string, []CallUsage) {
	bound := h.summaryReserve()
	extractive := budget.Extractive{Estimator: h.est}
	if h.cfg.Context.Summarizer != nil {
		s, err := h.cfg.Context.Summarizer.Summarize(ctx, previous, msgs, bound)
		if err == nil && h.est.Text(s) <= bound {
			return s, nil
		}
		h.log.Warn("the summarizer failed; folding with the extractive summary", "err", err)
		s, _ = extractive.Summarize(ctx, previous, msgs, bound)
		return s, nil
	}
	var b strings.Builder
	if previous != "" {
		b.WriteString("Earlier summary:\n" + previous + "\n\n")
	}
	b.WriteString("Turns to fold in:\n")
	for _, m := range msgs {
		switch {
		case m.Role == model.RoleTool:
			fmt.Fprintf(&b, "[result of %s] %s\n", m.Name, clipRunes(m.Content, maxTranscriptRunes))
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[assistant called %s] %s\n", c.Name, clipRunes(string(c.Arguments), maxTranscriptRunes))
			}
			if m.Content != "" {
				fmt.Fprintf(&b, "%s: %s\n", m.Role, clipRunes(m.Content, maxTranscriptRunes))
			}
		default:
			fmt.Fprintf(&b, "%s: %s\n", m.Role, clipRunes(m.Content, maxTranscriptRunes))
		}
	}
	req := &model.Request{System: summaryPrompt, Messages: []model.Message{{Role: model.RoleUser, Content: b.String()}}, MaxTokens: int64(bound)}
	if h.cal.Adjust(h.est.Request(req))+bound > h.window {
		s, _ := extractive.Summarize(ctx, previous, msgs, bound)
		return s, nil
	}
	r, err := h.cfg.Model.Generate(ctx, req)
	var calls []CallUsage
	if r != nil {
		calls = append(calls, h.measure("summary", h.est.Request(req), r))
	}
	if err == nil && r != nil {
		if s := strings.TrimSpace(r.Message.Content); s != "" && len(r.Message.ToolCalls) == 0 && h.est.Text(s) <= bound {
			return s, calls
		}
		err = errors.New("the summary was empty, asked for a tool or was over its bound")
	}
	if ctx.Err() == nil {
		h.log.Warn("the model could not summarize older turns; folding with the extractive summary", "err", err)
	}
	s, _ := extractive.Summarize(ctx, previous, msgs, bound)
	return s, calls
}

// clipRunes cuts s to at most n runes, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// CompactResult is what Compact folded.
type CompactResult struct {
	// Folded is the number of messages folded into the summary.
	Folded int
	// Kept is the number of messages still sent verbatim.
	Kept int
	// SummaryTokens is the summary's estimated size.
	SummaryTokens int
	// Tokens is the estimated size of the messages folded now.
	Tokens int
	// Summary is the summary now.
	Summary string
}

// Compact folds a stored session's history into its summary now, all but
// the latest turn, which stays verbatim (with its tool calls and their
// results). The transcript keeps every message.
func (h *Host) Compact(ctx context.Context, session string) (CompactResult, error) {
	v, err := h.sessions.s.view(ctx, session, h.est)
	if err != nil {
		return CompactResult{}, err
	}
	last := -1
	for i, m := range v.msgs {
		if m.Role == model.RoleUser {
			last = i
		}
	}
	if last <= 0 {
		return CompactResult{Kept: len(v.msgs), SummaryTokens: h.est.Text(v.summary), Summary: v.summary}, nil
	}
	p := &planner{Model: h.cfg.Model, h: h, session: session, v: v}
	if err := p.fold(ctx, last); err != nil {
		return CompactResult{}, err
	}
	if u := p.total(); len(u.Calls) > 0 {
		if err := h.sessions.s.addUsage(ctx, session, u); err != nil {
			return CompactResult{}, err
		}
	}
	return CompactResult{Folded: last, Kept: len(v.msgs) - last, SummaryTokens: h.est.Text(p.v.summary),
		Tokens: h.est.Messages(v.msgs[:last]), Summary: p.v.summary}, nil
}
