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
	client  string // the key of the client that asked (clientKey)
	// remember are the ways the answer may be kept that this approval
	// offers ("session", and "project" where an allow rule decides).
	remember []string
	// decide receives the answer; its capacity of one lets the answering
	// request return at once, and a second answer is refused.
	decide chan answer
}

// answer is the page's answer to an approval: allowed or not, and for how
// long ("" this call only, "session" or "project").
type answer struct {
	approved bool
	remember string
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
	// By is "view" when a tool's view asked for the call, not the model.
	By string `json:"by,omitempty"`
	// Remember lists how else than once the call may be allowed, for the
	// page's buttons: "session" (this tool for the rest of the session)
	// and "project" (from now on, in this project's permissions).
	Remember []string `json:"remember,omitempty"`
	// Remembered says, with Decision "allowed", for how long: "session"
	// or "project"; empty for this call only.
	Remembered string `json:"remembered,omitempty"`
}

// confirmer is the guard.Confirmer of a web turn (host.Turn.Confirmer): it
// raises an approval event on the turn's stream and waits for POST .../approvals/{id}, at most the
// approval timeout. Nobody to ask (the OpenAI endpoint, a broken stream),
// no answer in time, a cancelled turn and a full approval table all
// refuse, with a reason the model can pass on.
type confirmer struct {
	s *Server
	t *turn // the turn it asks for, on whose stream the question goes
}

func (c *confirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	s, t := c.s, c.t
	if t == nil || t.emit == nil {
		return guard.Decision{Reason: "nobody can approve calls made through this endpoint; use the chat page or the /api/sessions API to confirm it"}
	}
	if s.remembered.Allowed(ctx, t.session, req.Server, req.Tool) {
		return guard.Decision{Approved: true, Reason: "allowed on the web page for the rest of the session"}
	}
	a := &approval{id: randomID("ap-"), session: t.session, client: t.client, decide: make(chan answer, 1), remember: []string{"session"}}
	// Project is offered only where an allow rule decides: an ask rule
	// or AGENT_GUARD_CONFIRM asks whatever the allow list says.
	if s.opts.AllowInProject != nil && req.Server != "" && req.Cause == guard.AskDefault {
		a.remember = append(a.remember, "project")
	}
	// A turn waiting for approval holds a turn slot: the waits are capped
	// per client and server-wide (half the slots at most), so that turns
	// waiting on nobody cannot starve everyone else's.
	s.mu.Lock()
	if len(s.approvals) >= s.maxWaiting() {
		s.mu.Unlock()
		return guard.Decision{Reason: "too many approvals are waiting on this server; try again later"}
	}
	if s.waiting[a.client] >= s.opts.ApprovalsPerClient {
		s.mu.Unlock()
		return guard.Decision{Reason: fmt.Sprintf("%d approvals from this address are waiting already; answer them first", s.opts.ApprovalsPerClient)}
	}
	wait := s.opts.ApprovalTimeout
	if s.unread[a.client] {
		wait = s.opts.UnreadApprovalTimeout
	}
	s.approvals[a.id] = a
	s.waiting[a.client]++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.approvals, a.id)
		if s.waiting[a.client]--; s.waiting[a.client] <= 0 {
			delete(s.waiting, a.client)
		}
		s.mu.Unlock()
	}()

	ev := ApprovalEvent{ID: a.id, Tool: req.Tool, Server: req.Server, Preview: req.ArgsPreview(),
		Decision: "pending", TimeoutSeconds: int(wait.Seconds()), Remember: a.remember}
	if t.api == "app" {
		ev.By = "view"
	}
	// The timer starts before the question is shown, so the wait is
	// bounded whatever happens to the stream.
	timeout := s.clock.After(wait)
	if !t.emit("approval", ev) {
		return guard.Decision{Reason: "the page that could approve it is gone"}
	}
	var d guard.Decision
	select {
	case ans := <-a.decide:
		s.markRead(a.client, true)
		if ans.approved {
			ev.Decision, d = "allowed", guard.Decision{Approved: true, Reason: "allowed on the web page"}
			ev.Remembered = s.remember(ctx, t.session, req, ans.remember)
		} else {
			ev.Decision, d = "denied", guard.Decision{Reason: "the user clicked Deny"}
		}
	case <-timeout:
		s.markRead(a.client, false)
		ev.Decision, d = "timeout", guard.Decision{Reason: fmt.Sprintf("no answer within %v", wait)}
	case <-s.drained:
		ev.Decision, d = "denied", guard.Decision{Reason: "the server is shutting down, so the call could not wait for approval"}
	case <-ctx.Done():
		return guard.Decision{Reason: "the turn was cancelled while waiting for approval"}
	}
	s.metrics.approvals.WithLabelValues(ev.Decision).Inc()
	ev.TimeoutSeconds, ev.Remember = 0, nil
	t.emit("approval", ev)
	return d
}

// remember keeps an Allow for the session, and for "project" in the
// project's permissions too, and returns how long it holds. A failure to
// keep it is logged: the call was allowed all the same.
func (s *Server) remember(ctx context.Context, session string, req guard.ConfirmRequest, how string) string {
	if how == "" {
		return ""
	}
	if err := s.remembered.Allow(ctx, session, req.Server, req.Tool); err != nil {
		s.log.Warn("approval: " + err.Error())
	}
	if how != "project" {
		return "session"
	}
	file, err := s.opts.AllowInProject(req.Server, req.Tool)
	if err != nil {
		s.log.Warn(fmt.Sprintf("approval: could not allow %s:%s in the project (it holds for the session): %v", req.Server, req.Tool, err))
		return "session"
	}
	s.log.Info(fmt.Sprintf("approval: %s:%s allowed in this project from now on (%s)", req.Server, req.Tool, file))
	return "project"
}

// maxWaiting is how many approvals may wait at once: half the turn slots,
// within the table's cap, so that at least half the slots serve turns
// that are not waiting on anyone.
func (s *Server) maxWaiting() int {
	return max(1, min(maxPendingApprovals, s.opts.MaxStreams/2))
}

// markRead records whether a client answered its approval (it reads its
// stream) or let it run out (it may never read it). The table is capped:
// when full it starts over, which errs on the side of the long wait.
func (s *Server) markRead(client string, answered bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if answered {
		delete(s.unread, client)
		return
	}
	if len(s.unread) >= maxLimiterKeys {
		clear(s.unread)
	}
	s.unread[client] = true
}
