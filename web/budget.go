package web

import (
	"context"
)

// BudgetInfo is what a session may still use under the caps the service
// was started with (flags, config): the page's header shows it. Nil when
// the service has no session cap.
type BudgetInfo struct {
	// Tokens is the session's input+output token cap and what is left.
	Tokens *BudgetAmount `json:"tokens,omitempty"`
	// Cost is the session's cost cap (priced by the config's pricing
	// table) and what is left.
	Cost *BudgetAmount `json:"cost,omitempty"`
}

// BudgetAmount is one cap and what of it is left.
type BudgetAmount struct {
	Cap  float64 `json:"cap"`
	Left float64 `json:"left"`
}

// budgetLeft reads what session may still use; nil without caps, or when
// the usage could not be read (logged: the answer is still worth sending).
func (s *Server) budgetLeft(ctx context.Context, session string) *BudgetInfo {
	left, err := s.h.BudgetLeft(ctx, session)
	if err != nil {
		s.log.Error(err.Error())
		return nil
	}
	sp := s.h.Spend()
	var b BudgetInfo
	if left.SessionTokens >= 0 {
		b.Tokens = &BudgetAmount{Cap: float64(sp.SessionTokens), Left: float64(left.SessionTokens)}
	}
	if left.Cost >= 0 {
		b.Cost = &BudgetAmount{Cap: sp.Cost, Left: left.Cost}
	}
	if b.Tokens == nil && b.Cost == nil {
		return nil
	}
	return &b
}
