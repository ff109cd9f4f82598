package web

import (
	"context"
	"fmt"

	"github.com/agentapp/agentapp/guard"
)

// approval is a confirmation waiting for the page's Allow or Deny.
type approval struct {
	id      string
	session string
	// decide receives the answer; its capacity of one lets the answering
	// request return at once, and a second answer is refused.
	decide chan bool
}

// ApprovalEvent is the data of an "approval" event: sent with Decision
// "pending" when a guarded call waits for the user, and again with
// "allowed", "denied" or "timeout" when it was decided.
type ApprovalEvent struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Server string `json:"server"`
	// Preview is the arguments, shortened for display.
	Preview  string `json:"preview"`
	Decision string `json:"decision"`
	// TimeoutSeconds is how long the approval waits for an answer.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// confirmer is the guard.Confirmer of the web: it raises an approval event
// on the turn's stream and waits for POST .../approvals/{id}, at most the
// approval timeout. Nobody to ask (the OpenAI endpoint, a broken stream),
// no answer in time, a cancelled turn and a full approval table all
// refuse, with a reason the model can pass on.
type confirmer struct{ s *Server }

func (c *confirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	s := c.s
	t := turnFrom(ctx)
	if t == nil || t.emit == nil {
		return guard.Decision{Reason: "nobody can approve calls made through this endpoint; use the chat page or the /api/sessions API to confirm it"}
	}
	a := &approval{id: randomID("ap-"), session: t.session, decide: make(chan bool, 1)}
	s.mu.Lock()
	if len(s.approvals) >= maxPendingApprovals {
		s.mu.Unlock()
		return guard.Decision{Reason: "too many approvals are waiting on this server; try again later"}
	}
	s.approvals[a.id] = a
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.approvals, a.id)
		s.mu.Unlock()
	}()

	ev := ApprovalEvent{ID: a.id, Tool: req.Tool, Server: req.Server, Preview: req.ArgsPreview(),
		Decision: "pending", TimeoutSeconds: int(s.opts.ApprovalTimeout.Seconds())}
	// The timer starts before the question is shown, so the wait is
	// bounded whatever happens to the stream.
	timeout := s.clock.After(s.opts.ApprovalTimeout)
	if !t.emit("approval", ev) {
		return guard.Decision{Reason: "the page that could approve it is gone"}
	}
	var d guard.Decision
	select {
	case ok := <-a.decide:
		if ok {
			ev.Decision, d = "allowed", guard.Decision{Approved: true, Reason: "allowed on the web page"}
		} else {
			ev.Decision, d = "denied", guard.Decision{Reason: "the user clicked Deny"}
		}
	case <-timeout:
		ev.Decision, d = "timeout", guard.Decision{Reason: fmt.Sprintf("no answer within %v", s.opts.ApprovalTimeout)}
	case <-s.drained:
		ev.Decision, d = "denied", guard.Decision{Reason: "the server is shutting down, so the call could not wait for approval"}
	case <-ctx.Done():
		return guard.Decision{Reason: "the turn was cancelled while waiting for approval"}
	}
	s.metrics.approvals.WithLabelValues(ev.Decision).Inc()
	ev.TimeoutSeconds = 0
	t.emit("approval", ev)
	return d
}
