package host

import (
	"context"
	"slices"
	"sync"

	"github.com/agentapp/agentapp/model"
)

// Usage is what the model calls of a turn cost, in tokens.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// Estimated reports that some count is the host's estimate: the
	// provider did not report it (the offline model never does; some
	// OpenAI-compatible servers leave it out of streamed replies).
	Estimated bool `json:"estimated,omitempty"`
	// Calls are the turn's model calls, in order.
	Calls []CallUsage `json:"calls,omitempty"`
}

// CallUsage is one model call's tokens.
type CallUsage struct {
	// Model is the model's name.
	Model string `json:"model"`
	// Purpose is "answer" for a call of the tool loop, "summary" for one
	// that folded older turns.
	Purpose      string `json:"purpose"`
	InputTokens  int    `json:"inputTokens"`
	OutputTokens int    `json:"outputTokens"`
	// Estimated reports that a count was estimated, not reported.
	Estimated bool `json:"estimated,omitempty"`
}

// add counts one call in u.
func (u *Usage) add(c CallUsage) {
	u.InputTokens += c.InputTokens
	u.OutputTokens += c.OutputTokens
	u.Estimated = u.Estimated || c.Estimated
	u.Calls = append(u.Calls, c)
}

// reported returns the tokens of the calls the provider counted.
func (u Usage) reported() (in, out int) {
	for _, c := range u.Calls {
		if !c.Estimated {
			in += c.InputTokens
			out += c.OutputTokens
		}
	}
	return in, out
}

// TokenCount is the tokens counted for one model and kind since the host
// started, for a metrics endpoint.
type TokenCount struct {
	Model string
	// Kind is "input" or "output".
	Kind string
	// Estimated is the part of Tokens the host estimated.
	Tokens, Estimated int64
}

// maxCountedModels caps the models the counters keep apart; the names come
// from the configuration and from MCP sampling requests, so they are few,
// but a cap keeps a misbehaving caller from growing the table.
const maxCountedModels = 64

// tokenCounters add up the tokens of every model call of the host.
type tokenCounters struct {
	mu sync.Mutex
	m  map[[2]string]*TokenCount
}

func (t *tokenCounters) add(c CallUsage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[[2]string]*TokenCount{}
	}
	name := c.Model
	if _, ok := t.m[[2]string{name, "input"}]; !ok && len(t.m) >= 2*maxCountedModels {
		name = "other"
	}
	for _, k := range []struct {
		kind string
		n    int
	}{{"input", c.InputTokens}, {"output", c.OutputTokens}} {
		key := [2]string{name, k.kind}
		tc := t.m[key]
		if tc == nil {
			tc = &TokenCount{Model: name, Kind: k.kind}
			t.m[key] = tc
		}
		tc.Tokens += int64(k.n)
		if c.Estimated {
			tc.Estimated += int64(k.n)
		}
	}
}

// TokenCounts returns the tokens of every model call since the host
// started, by model and kind, sorted.
func (h *Host) TokenCounts() []TokenCount {
	t := &h.tokens
	t.mu.Lock()
	out := make([]TokenCount, 0, len(t.m))
	for _, tc := range t.m {
		out = append(out, *tc)
	}
	t.mu.Unlock()
	slices.SortFunc(out, func(a, b TokenCount) int {
		if a.Model != b.Model {
			if a.Model < b.Model {
				return -1
			}
			return 1
		}
		if a.Kind < b.Kind {
			return -1
		}
		if a.Kind > b.Kind {
			return 1
		}
		return 0
	})
	return out
}

// SessionUsage returns a session's stored token totals and the size of its
// summary.
func (h *Host) SessionUsage(ctx context.Context, id string) (SessionUsage, error) {
	u, summary, err := h.sessions.s.usage(ctx, id)
	if summary != "" {
		u.SummaryTokens = h.est.Text(summary)
	}
	return u, err
}

// measure returns the usage of one call: the provider's counts, or the
// estimate of what was sent (estimate, the raw Estimator.Request of it)
// and received where the provider gave none. A reported input count also
// calibrates the estimator.
func (h *Host) measure(purpose string, estimate int, r *model.Response) CallUsage {
	c := CallUsage{Model: h.cfg.Model.Name(), Purpose: purpose}
	if r == nil {
		return c
	}
	c.InputTokens, c.OutputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
	if c.InputTokens > 0 {
		h.cal.Observe(estimate, c.InputTokens)
	} else {
		c.InputTokens, c.Estimated = h.cal.Adjust(estimate), true
	}
	if c.OutputTokens == 0 {
		msg := r.Message
		msg.Role = model.RoleAssistant
		if n := h.est.Message(msg); msg.Content != "" || len(msg.ToolCalls) > 0 {
			c.OutputTokens, c.Estimated = h.cal.Adjust(n), true
		}
	}
	h.tokens.add(c)
	h.day.add(h.cfg.Now(), c.InputTokens+c.OutputTokens)
	return c
}

// keepUsage adds a turn's usage to its stored session's totals, whether
// the turn succeeded or not: the calls were made either way. A
// conversation that is not stored (the OpenAI endpoint's) keeps nothing.
func (h *Host) keepUsage(ctx context.Context, p *planner) {
	u, session := p.total(), p.session
	if session == "" || len(u.Calls) == 0 || p.usageKept {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := h.sessions.s.addUsage(sctx, session, u); err != nil {
		h.log.Warn("the turn's token usage was not stored", "session", session, "err", err)
	}
}
