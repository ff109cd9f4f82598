package web

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"time"

	"github.com/agentapp/agentapp/host"
)

// DefaultOperatorTimeout is how long a held conversation waits for an
// operator who is gone (no operator stream open on any replica and no
// action on it) before it returns to the waiting queue.
const DefaultOperatorTimeout = 2 * time.Minute

// maxReleasedPerRound caps the held conversations one round looks at.
const maxReleasedPerRound = 1000

// presence is what this process knows of the operators: the streams
// open here, and when this process started. What every replica has seen
// (streams' heartbeats, holders' actions) is in web_operator_presence.
type presence struct {
	mu      sync.Mutex
	streams int
	started time.Time // a fresh process gives held conversations a full timeout
}

// presenceKeep is how long a presence row outlives the timeout before a
// round deletes it: past the timeout it keeps no conversation held.
const presenceKeep = time.Minute

func (s *Server) operatorTimeout() time.Duration {
	if s.opts.OperatorTimeout == 0 {
		return DefaultOperatorTimeout
	}
	return s.opts.OperatorTimeout
}

// heartbeatEvery is how often an open operator stream writes that it is
// seen: often enough that a replica reading it never finds it older than
// the timeout.
func (s *Server) heartbeatEvery() time.Duration {
	return min(max(s.operatorTimeout()/4, 250*time.Millisecond), 30*time.Second)
}

// operatorStream counts an operator stream open here, at once (before
// the stream answers), and until ctx ends writes its heartbeat row every
// heartbeatEvery; at the end the row keeps when it closed, from which the
// timeout counts. wait returns once that last row is written and the
// stream is no longer counted.
func (s *Server) operatorStream(ctx context.Context) (wait func()) {
	s.present.mu.Lock()
	s.present.streams++
	s.present.mu.Unlock()
	id := randomID("s:")
	beat := func() {
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.seen(bctx, id, ""); err != nil {
			s.log.Warn("writing an operator stream's heartbeat failed; other replicas may think the operator gone", "err", err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			beat()
			s.present.mu.Lock()
			s.present.streams--
			s.present.mu.Unlock()
		}()
		for {
			// The next beat is timed from before this one's write, so a
			// slow write does not stretch the interval.
			next := s.clock.After(s.heartbeatEvery())
			beat()
			select {
			case <-ctx.Done():
				return
			case <-next:
			}
		}
	}()
	return func() { <-done }
}

// seen writes that an operator was seen now: on stream id, or acting on
// the held session.
func (s *Server) seen(ctx context.Context, id, session string) error {
	if s.operatorTimeout() < 0 {
		return nil // nothing is ever released: nothing to share
	}
	_, err := s.h.Store().DB.ExecContext(ctx, `INSERT INTO web_operator_presence (id, session_id, seen_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET seen_at = excluded.seen_at`, id, session, s.clock.Now().UnixMilli())
	return err
}

// acted notes an action of the holder of session id (takeover, message);
// done forgets it (the conversation is no longer held). A failed write is
// logged: the action itself succeeded.
func (s *Server) acted(ctx context.Context, id string, done bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var err error
	if done {
		_, err = s.h.Store().DB.ExecContext(ctx, `DELETE FROM web_operator_presence WHERE id = ?`, "a:"+id)
	} else {
		err = s.seen(ctx, "a:"+id, id)
	}
	if err != nil {
		s.log.Warn("recording an operator's action for the absent-operator release failed", "session", id, "err", err)
	}
}

// lastSeen reads, from what every replica wrote, when an operator stream
// was last seen and each held session's last action, deleting the rows
// too old to matter.
func (s *Server) lastSeen(ctx context.Context, now time.Time) (streams time.Time, acted map[string]time.Time, err error) {
	old := now.Add(-s.operatorTimeout() - presenceKeep).UnixMilli()
	if _, err := s.h.Store().DB.ExecContext(ctx, `DELETE FROM web_operator_presence WHERE seen_at < ?`, old); err != nil {
		return streams, nil, err
	}
	var ms sql.NullInt64
	if err := s.h.Store().DB.QueryRowContext(ctx, `SELECT MAX(seen_at) FROM web_operator_presence WHERE session_id = ''`).Scan(&ms); err != nil {
		return streams, nil, err
	}
	if ms.Valid {
		streams = time.UnixMilli(ms.Int64)
	}
	rows, err := s.h.Store().DB.QueryContext(ctx, `SELECT session_id, seen_at FROM web_operator_presence WHERE session_id <> '' ORDER BY seen_at DESC LIMIT ?`, maxReleasedPerRound)
	if err != nil {
		return streams, nil, err
	}
	defer rows.Close()
	acted = map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return streams, nil, err
		}
		acted[id] = time.UnixMilli(at)
	}
	return streams, acted, rows.Err()
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
// operator no replica has seen for the timeout (no operator stream open
// or closed within it anywhere, no action on it): a state event and
// operator_left go to both streams. It returns how many it released.
func (s *Server) releaseAbsent(ctx context.Context) (int, error) {
	timeout := s.operatorTimeout()
	if timeout < 0 {
		return 0, nil
	}
	now := s.clock.Now()
	s.present.mu.Lock()
	streams, started := s.present.streams, s.present.started
	s.present.mu.Unlock()
	if streams > 0 {
		return 0, nil // an operator is here: no need to ask the others
	}
	streamSeen, acted, err := s.lastSeen(ctx, now)
	if err != nil {
		return 0, err
	}
	if now.Sub(streamSeen) < timeout || now.Sub(started) < timeout {
		return 0, nil
	}
	held, err := s.sessions.ByState(ctx, host.StateHuman, 0, "", maxReleasedPerRound)
	if err != nil {
		return 0, err
	}
	released := 0
	for _, st := range held {
		last := st.Since
		if a := acted[st.ID]; a.After(last) {
			last = a
		}
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
		s.acted(ctx, st.ID, true)
		s.log.Info("a held conversation returned to the queue: its operator is gone", "session", st.ID, "operator", st.Operator, "after", timeout)
		released++
	}
	if released > 0 {
		s.feed.kick()
	}
	return released, nil
}
