package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/resultstore"
	"github.com/agentapp/agentapp/resultstore/sqlstore"
)

// resultOptions bound the tool results the model sees. A nil
// *resultOptions, or a zero field, means the default.
type resultOptions struct {
	// MaxTokens caps a result of any tool without a cap of its own
	// (default resultstore.DefaultMaxTokens): above it the model gets the
	// head, a note and the handle to read on with readToolResult.
	MaxTokens int
	// PerServer caps the results of one MCP server by its name (the
	// config's maxOutputTokens).
	PerServer map[string]int
	// Store keeps the whole of cut results; nil keeps them in the host's
	// database (resultstore/sqlstore), with the session.
	Store resultstore.Store
}

// ResultCut says that a tool result was over its cap: the model saw its
// head, and the whole was stored (or could not be, StoreErr).
type ResultCut struct {
	// ID is the handle of the stored whole ("" when it was not stored).
	ID string
	// Bytes and Tokens are the size of the whole result (Tokens
	// estimated); Shown is the bytes of the head the model saw.
	Bytes, Tokens, Shown int
	// Notice is the line to show the user.
	Notice string
}

// resultParts are the host's cutting of large results: the cutter, the
// readToolResult tool, and which sessions have had a result cut (the tool
// is offered to those only).
type resultParts struct {
	cutter   *resultstore.Cutter
	readTool *agent.Tool
	now      func() time.Time

	mu sync.Mutex
	// cut says which sessions have a stored result (true) or had none
	// when last asked (false, re-asked after cutRecheck: another replica
	// may have cut one since).
	cut map[string]cutState
	// wraps are the wrapped tools of the table wrapFor, kept so that a
	// tool's schema is compiled once per table, not per model call.
	pruned  time.Time // when the store was last pruned
	wrapFor *agent.ToolSet
	wraps   map[*agent.Tool]*agent.Tool
}

// wrapped returns t of table wrapped by wrap, built once per table.
func (h *Host) wrapped(table *agent.ToolSet, t *agent.Tool) *agent.Tool {
	r := h.results
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wrapFor != table {
		r.wrapFor, r.wraps = table, map[*agent.Tool]*agent.Tool{}
	}
	w, ok := r.wraps[t]
	if !ok {
		w = r.wrap(t)
		r.wraps[t] = w
	}
	return w
}

// hasResults is a store that can tell whether a session has a stored
// result, so a resumed session is offered readToolResult again.
type hasResults interface {
	HasResults(ctx context.Context, session string) (bool, error)
}

// newResultParts opens the result store (the database's unless opts gives
// one) and the tools over it.
func newResultParts(ctx context.Context, cfg *config) (*resultParts, error) {
	var o resultOptions
	if cfg.Results != nil {
		o = *cfg.Results
	}
	if o.Store == nil {
		if cfg.Store == nil {
			o.Store = resultstore.NewMemory(nil)
		} else {
			st, err := sqlstore.New(ctx, cfg.Store, &sqlstore.Options{Now: cfg.Now})
			if err != nil {
				return nil, fmt.Errorf("opening the store of large tool results: %w", err)
			}
			o.Store = st
		}
	}
	limits := resultstore.Limits{Default: o.MaxTokens, PerServer: o.PerServer}
	// Tokens are counted as the model's tokenizer would (GLM's, say, packs
	// Chinese denser than o200k).
	est := budget.NewEstimator(budget.LookupModel(cfg.Model.Name()).Family)
	// A page of readToolResult is a local tool's result: it stays well
	// under the local cap, so a page is never cut again.
	page := min(10_000, limits.For("")/2)
	return &resultParts{
		cutter: &resultstore.Cutter{Store: o.Store, Limits: limits, Estimator: est},
		readTool: resultstore.NewReadTool(o.Store, &resultstore.ReadOptions{PageTokens: page, Estimator: est,
			// A page of a server's result is within that server's cap,
			// with room for the page's position line.
			PageTokensFor: func(server string) int { return limits.For(server) - 100 }}),
		cut: map[string]cutState{},
		now: cfg.Now,
	}, nil
}

// maxCutSessions bounds the memory of which sessions had a cut; past it
// the store is asked again.
const maxCutSessions = 10_000

// cutRecheck is how long a session's having no stored result is believed
// without asking the store again.
const cutRecheck = 30 * time.Second

type cutState struct {
	has bool
	at  time.Time
}

// sessionHasCut reports whether readToolResult is offered to session.
func (r *resultParts) sessionHasCut(ctx context.Context, session string) bool {
	now := r.now()
	r.mu.Lock()
	known, ok := r.cut[session]
	r.mu.Unlock()
	if ok && (known.has || now.Sub(known.at) < cutRecheck) {
		return known.has
	}
	hr, ok := r.cutter.Store.(hasResults)
	if !ok {
		return false
	}
	has, err := hr.HasResults(ctx, session)
	if err != nil {
		return false // not remembered: asked again at the next step
	}
	r.remember(session, cutState{has: has, at: now})
	return has
}

func (r *resultParts) markCut(session string) { r.remember(session, cutState{has: true, at: r.now()}) }

func (r *resultParts) remember(session string, c cutState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.cut) >= maxCutSessions {
		clear(r.cut)
	}
	r.cut[session] = c
}

// wrap returns t whose results (and error messages) are cut to the cap of
// its server. A cut is reported to the running turn (for the user) and
// makes readToolResult available in the session from the next step on.
func (r *resultParts) wrap(t *agent.Tool) *agent.Tool {
	inner := t.Execute
	server := t.Origin
	if server == ResourceToolOrigin || server == SkillToolOrigin {
		server = ""
	}
	w := copyTool(t)
	w.Execute = func(ctx context.Context, args json.RawMessage) (any, error) {
		out, err := inner(ctx, args)
		session := agent.SessionFrom(ctx)
		if err != nil {
			msg := err.Error()
			if c := r.cutter.Apply(ctx, session, server, t.Name, msg); c.Cut {
				r.report(ctx, session, t.Name, c)
				return nil, &cutError{text: c.Text, err: err}
			}
			return nil, err
		}
		text, err := agent.FormatOutput(out)
		if err != nil {
			return nil, err
		}
		c := r.cutter.Apply(ctx, session, server, t.Name, text)
		if c.Cut {
			r.report(ctx, session, t.Name, c)
		}
		return c.Text, nil
	}
	return w
}

// report tells the turn and the user of a cut, and remembers that the
// session has a stored result.
func (r *resultParts) report(ctx context.Context, session, tool string, c resultstore.Cut) {
	if c.ID != "" {
		r.markCut(session)
		r.prune(ctx)
	}
	if rt := turnFrom(ctx); rt != nil {
		rt.noteCut(c.Text, &ResultCut{ID: c.ID, Bytes: c.Bytes, Tokens: c.Tokens, Shown: c.Shown, Notice: c.Notice(tool)})
	}
}

// resultPruneEvery is how often storing a result also drops what is past its
// age or over the store's caps.
const resultPruneEvery = 10 * time.Minute

// prune prunes the store when it was not pruned for resultPruneEvery; a failure
// is retried at the next cut.
func (r *resultParts) prune(ctx context.Context) {
	now := r.now()
	r.mu.Lock()
	due := now.Sub(r.pruned) >= resultPruneEvery
	if due {
		r.pruned = now
	}
	r.mu.Unlock()
	if !due {
		return
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := r.cutter.Store.Prune(pctx); err != nil {
		r.mu.Lock()
		r.pruned = time.Time{}
		r.mu.Unlock()
	}
}

// cutError is a tool error whose message was over the cap: the model sees
// the cut message; errors.Is and As still reach the tool's error.
type cutError struct {
	text string
	err  error
}

func (e *cutError) Error() string { return e.text }
func (e *cutError) Unwrap() error { return e.err }

// noteCut keeps what became of a cut result until its call's end is
// reported (Observe), which finds it by the text the model was shown.
func (t *running) noteCut(shown string, c *ResultCut) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cuts == nil {
		t.cuts = map[string]*ResultCut{}
	}
	t.cuts[shown] = c
}

// cutOf returns the cut of a finished call, nil when it was not cut.
func (t *running) cutOf(ev agent.StepEvent) *ResultCut {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.cuts) == 0 {
		return nil
	}
	key := ev.Output
	if ev.Err != nil {
		var ce *cutError
		if !errors.As(ev.Err, &ce) {
			return nil
		}
		key = ce.text
	}
	c := t.cuts[key]
	delete(t.cuts, key)
	return c
}

// copyTool returns a new tool with t's fields (and not its compiled
// schema, which the copy compiles again on first use).
func copyTool(t *agent.Tool) *agent.Tool {
	return &agent.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: t.Destructive, OpenWorld: t.OpenWorld,
		Origin: t.Origin, Validate: t.Validate, Execute: t.Execute, Ready: t.Ready,
	}
}

// serverCaps returns the servers' own result caps (maxOutputTokens).
func serverCaps(cfgs []mcpconfig.Server) map[string]int {
	caps := map[string]int{}
	for _, c := range cfgs {
		if c.MaxOutputTokens > 0 {
			caps[c.Name] = c.MaxOutputTokens
		}
	}
	return caps
}
