package host

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
)

// Spend caps what the model calls of a session and of a turn may use; a
// zero field is no cap. It is set by whoever runs the host (flags, the
// config file), never by a client of a front end.
type Spend struct {
	// SessionTokens caps a session's input and output tokens together,
	// its earlier turns included (--max-session-tokens).
	SessionTokens int
	// TurnTokens caps one turn's (--max-turn-tokens).
	TurnTokens int
	// DayTokens caps the tokens of every session of this host together
	// in one UTC day (--max-day-tokens): a web service's daily budget. It
	// is counted in memory, so each replica keeps its own.
	DayTokens int
	// Cost caps a session's cost, priced by Price (--max-cost).
	Cost float64
	// Price is the model's price per million input and output tokens;
	// required with Cost.
	Price *Price
	// Names name the caps in messages (the flags, say); empty fields
	// name them by what they are.
	Names SpendNames
}

// Price is a model's price per million tokens.
type Price struct{ Input, Output float64 }

// SpendNames name the caps as the user set them.
type SpendNames struct{ SessionTokens, TurnTokens, DayTokens, Cost string }

// cost prices tokens.
func (p *Price) cost(in, out int64) float64 {
	return (float64(in)*p.Input + float64(out)*p.Output) / 1e6
}

// BudgetError is a turn stopped by a cap of Spend: before a model call,
// when what was used plus the request's estimate and its output cap would
// pass it, or after one, when the usage reported passed it.
type BudgetError struct {
	// Cap names the cap ("--max-session-tokens"); Limit and Used are its
	// value ("100") and the amount counted against it, worded ("5406
	// tokens in this session").
	Cap, Limit, Used string
	// Before: the turn stopped before a model call, on the estimate.
	Before bool
	// Estimated: some of Used is the host's estimate.
	Estimated bool
}

func (e *BudgetError) Error() string {
	how := "used"
	if e.Before {
		how = "used with the next model call's estimate and output cap"
	}
	if e.Estimated {
		how += ", partly estimated"
	}
	return fmt.Sprintf("the turn was stopped at the budget %s %s: %s (%s); nothing of it was stored", e.Cap, e.Limit, e.Used, how)
}

// Spend returns the host's caps.
func (h *Host) Spend() Spend { return h.cfg.Spend }

// Budget left of a session: what each cap of Spend still allows, for
// /usage and the page's header. A field is -1 where there is no cap.
type BudgetLeft struct {
	SessionTokens int64   `json:"sessionTokens"`
	Cost          float64 `json:"cost"`
}

// BudgetLeft returns what a session may still use.
func (h *Host) BudgetLeft(ctx context.Context, session string) (BudgetLeft, error) {
	left := BudgetLeft{SessionTokens: -1, Cost: -1}
	s := h.cfg.Spend
	if s.SessionTokens == 0 && s.Cost == 0 {
		return left, nil
	}
	u, _, err := h.sessions.s.usage(ctx, session)
	if err != nil {
		return left, err
	}
	if s.SessionTokens > 0 {
		left.SessionTokens = max(0, int64(s.SessionTokens)-u.InputTokens-u.OutputTokens)
	}
	if s.Cost > 0 && s.Price != nil {
		left.Cost = max(0, s.Cost-s.Price.cost(u.InputTokens, u.OutputTokens))
	}
	return left, nil
}

// spendCheck holds a turn to Spend: base is the session's usage before
// the turn (read once, at the first check).
type spendCheck struct {
	h        *Host
	session  string
	baseRead bool
	baseIn   int64
	baseOut  int64
	baseEst  bool
}

func (p *planner) checkSpend(ctx context.Context, send *model.Request, before bool) error {
	s := p.h.cfg.Spend
	if s.SessionTokens == 0 && s.TurnTokens == 0 && s.Cost == 0 && s.DayTokens == 0 {
		return nil
	}
	sc := &p.spend
	if !sc.baseRead && p.session != "" {
		u, _, err := p.h.sessions.s.usage(ctx, p.session)
		if err != nil {
			return err
		}
		sc.baseIn, sc.baseOut, sc.baseEst, sc.baseRead = u.InputTokens, u.OutputTokens, u.EstimatedCalls > 0, true
	}
	turn := p.total()
	in, out := int64(turn.InputTokens), int64(turn.OutputTokens)
	est := turn.Estimated
	if before {
		// The request as it will be sent, and the most it may answer.
		in += int64(p.h.cal.Adjust(p.h.est.RequestCounted(send, p.v.tokens[p.folded:])))
		reply := send.MaxTokens
		if reply <= 0 {
			reply = int64(p.h.cfg.Context.Reply)
		}
		if reply <= 0 {
			reply = budget.DefaultReply
		}
		out += reply
		est = true
	}
	name := func(n, what string) string {
		if n != "" {
			return n
		}
		return what
	}
	fail := func(cap, limit, used string) error {
		return &BudgetError{Cap: cap, Limit: limit, Used: used, Before: before, Estimated: est || sc.baseEst}
	}
	if s.DayTokens > 0 {
		// The day's count holds this turn's calls already; before a
		// call, only the next one's estimate is added.
		day := p.h.day.used(p.h.cfg.Now())
		if before {
			day += in + out - int64(turn.InputTokens) - int64(turn.OutputTokens)
		}
		if day > int64(s.DayTokens) {
			return fail(name(s.Names.DayTokens, "of tokens per day"), strconv.Itoa(s.DayTokens), strconv.FormatInt(day, 10)+" tokens today (UTC)")
		}
	}
	if s.TurnTokens > 0 && in+out > int64(s.TurnTokens) {
		return fail(name(s.Names.TurnTokens, "of tokens per turn"), strconv.Itoa(s.TurnTokens), strconv.FormatInt(in+out, 10)+" tokens this turn")
	}
	in, out = in+sc.baseIn, out+sc.baseOut
	if s.SessionTokens > 0 && in+out > int64(s.SessionTokens) {
		return fail(name(s.Names.SessionTokens, "of tokens per session"), strconv.Itoa(s.SessionTokens), strconv.FormatInt(in+out, 10)+" tokens in this session")
	}
	if s.Cost > 0 && s.Price != nil {
		if c := s.Price.cost(in, out); c > s.Cost {
			return fail(name(s.Names.Cost, "of cost per session"), strconv.FormatFloat(s.Cost, 'f', -1, 64), strconv.FormatFloat(c, 'f', 4, 64)+" in this session")
		}
	}
	return nil
}

// dayCount adds up the tokens of every model call of the host in the
// current UTC day.
type dayCount struct {
	mu  sync.Mutex
	day string
	n   int64
}

func (d *dayCount) add(now time.Time, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k := now.UTC().Format(time.DateOnly); k != d.day {
		d.day, d.n = k, 0
	}
	d.n += int64(n)
}

func (d *dayCount) used(now time.Time) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.UTC().Format(time.DateOnly) != d.day {
		return 0
	}
	return d.n
}
