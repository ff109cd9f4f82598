package web

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentapp/agentapp/host"
)

// DefaultOperatorTimeout is how long a held conversation waits for an
// operator who is gone (no operator stream open here and no action on
// it) before it returns to the waiting queue.
const DefaultOperatorTimeout = 2 * time.Minute

// maxReleasedPerRound caps the held conversations one round looks at.
const maxReleasedPerRound = 1000

// presence is what this process knows of the operators: the streams
// open, when the last one closed, and each held conversation's last
// action.
type presence struct {
	mu      sync.Mutex
	streams int
	gone    time.Time            // when streams last fell to 0 (or the start)
	acted   map[string]time.Time // session → its holder's last action here
}

func (s *Server) operatorTimeout() time.Duration {
	if s.opts.OperatorTimeout == 0 {
		return DefaultOperatorTimeout
	}
	return s.opts.OperatorTimeout
}

func (s *Server) streamOpened() {
	s.present.mu.Lock()
	s.present.streams++
	s.present.mu.Unlock()
}

func (s *Server) streamClosed() {
	s.present.mu.Lock()
	if s.present.streams--; s.present.streams == 0 {
		s.present.gone = s.clock.Now()
	}
	s.present.mu.Unlock()
}

// acted notes an action of the holder of session id (takeover, message);
// done forgets it (the conversation is no longer held).
func (s *Server) acted(id string, done bool) {
	s.present.mu.Lock()
	defer s.present.mu.Unlock()
	if done {
		delete(s.present.acted, id)
		return
	}
	if s.present.acted == nil {
		s.present.acted = map[string]time.Time{}
	}
	s.present.acted[id] = s.clock.Now()
}

// watchAbsent releases the conversations of absent operators every
// quarter of the timeout, until ctx ends.
func (s *Server) watchAbsent(ctx context.Context) {
	timeout := s.operatorTimeout()
	if timeout < 0 {
		return
	}
	every := max(timeout/4, time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.clock.After(every):
		}
		qctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if _, err := s.releaseAbsent(qctx); err != nil && ctx.Err() == nil {
			s.log.Warn("returning the conversations of absent operators to the queue failed", "err", err)
		}
		cancel()
	}
}

// releaseAbsent returns to the waiting queue each held conversation whose
// operator has had no stream open here and done nothing on it for the
// timeout: a state event and operator_left go to both streams. It
// returns how many it released.
func (s *Server) releaseAbsent(ctx context.Context) (int, error) {
	timeout := s.operatorTimeout()
	if timeout < 0 {
		return 0, nil
	}
	now := s.clock.Now()
	s.present.mu.Lock()
	streams, gone := s.present.streams, s.present.gone
	s.present.mu.Unlock()
	if streams > 0 {
		return 0, nil
	}
	held, err := s.sessions.ByState(ctx, host.StateHuman, 0, "", maxReleasedPerRound)
	if err != nil {
		return 0, err
	}
	released := 0
	for _, st := range held {
		last := st.Since
		if gone.After(last) {
			last = gone
		}
		s.present.mu.Lock()
		if a, ok := s.present.acted[st.ID]; ok && a.After(last) {
			last = a
		}
		s.present.mu.Unlock()
		if now.Sub(last) < timeout {
			continue
		}
		_, err := s.sessions.Transition(ctx, st.ID, []host.ConvState{host.StateHuman}, host.StateWaiting, "",
			host.SessionEvent{Kind: host.EventKindOperatorLeft, Operator: st.Operator})
		var conflict *host.StateConflictError
		if errors.As(err, &conflict) {
			continue // handed back or released meanwhile
		}
		if err != nil {
			return released, err
		}
		s.acted(st.ID, true)
		s.log.Info("a held conversation returned to the queue: its operator is gone", "session", st.ID, "operator", st.Operator, "after", timeout)
		released++
	}
	if released > 0 {
		s.feed.kick()
	}
	return released, nil
}
