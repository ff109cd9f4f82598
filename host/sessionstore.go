package host

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// SessionStore is the host's session persistence, so that a conversation
// is stored the same way whichever front end held it: the same tables, the
// same window rule, the same one-transaction turn.
type SessionStore struct {
	s *sessions

	pruneMu  sync.Mutex
	prunedTo int64 // updated_ms below which empty sessions were last pruned
}

// emptySessionTTL is how long SessionStore keeps a session that never got
// a message. Front ends hand ids out before the first message, so a client
// that asks for sessions and never uses them would otherwise grow the
// table without end; a session with a message is never removed here.
const emptySessionTTL = 24 * time.Hour

// pruneEvery spaces the prunes Create runs.
const pruneEvery = time.Minute

// OpenSessionStore migrates the chat's session tables of st and returns
// them. now is the clock; nil means time.Now.
func OpenSessionStore(ctx context.Context, st *store.Store, now func() time.Time) (*SessionStore, error) {
	if now == nil {
		now = time.Now
	}
	s, err := openSessions(ctx, st, now)
	if err != nil {
		return nil, err
	}
	return &SessionStore{s: s}, nil
}

// Create records an empty session with the given id; an id that exists
// already is left as it is. A front end that hands out ids before the first
// message (the web's POST /api/sessions) creates them here, so that an id
// it never issued is refused.
func (s *SessionStore) Create(ctx context.Context, id string) error {
	now := s.s.now()
	// Sessions asked for at once share a commit (store.GroupTx).
	err := s.s.st.GroupTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chat_sessions (id, created_at, updated_ms) VALUES (?, ?, ?)
			ON CONFLICT(id) DO NOTHING`, id, now.UTC().Format(time.RFC3339), now.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("create chat session %s: %w", id, err)
	}
	if err := s.pruneEmpty(ctx, now); err != nil {
		return fmt.Errorf("remove chat sessions left empty for %s: %w", emptySessionTTL, err)
	}
	return nil
}

// pruneEmpty removes the sessions without a message that were created more
// than emptySessionTTL before now, at most once per pruneEvery. Each prune
// looks only at the sessions that reached that age since the previous one
// (the first at all older ones), so its cost stays with the sessions
// created, not with all those stored. A first message sent to a session as
// it is removed still lands: storing a turn recreates its session row.
func (s *SessionStore) pruneEmpty(ctx context.Context, now time.Time) error {
	cutoff := now.Add(-emptySessionTTL).UnixMilli()
	s.pruneMu.Lock()
	from := s.prunedTo
	if from != 0 && cutoff-from < pruneEvery.Milliseconds() {
		s.pruneMu.Unlock()
		return nil
	}
	s.prunedTo = cutoff
	s.pruneMu.Unlock()
	_, err := s.s.st.DB.ExecContext(ctx, `DELETE FROM chat_sessions WHERE updated_ms >= ? AND updated_ms < ?
		AND NOT EXISTS (SELECT 1 FROM chat_messages WHERE chat_messages.session_id = chat_sessions.id)`, from, cutoff)
	if err != nil {
		s.pruneMu.Lock()
		s.prunedTo = min(s.prunedTo, from) // try the same window again next time
		s.pruneMu.Unlock()
	}
	return err
}

// Exists reports whether a session with this id is stored.
func (s *SessionStore) Exists(ctx context.Context, id string) (bool, error) {
	_, ok, err := s.s.count(ctx, id)
	return ok, err
}

// Window returns the newest messages of a session, at most limit, oldest
// first and starting at a user message (the window the chat gives the
// model, and a history that reads from its start).
func (s *SessionStore) Window(ctx context.Context, id string, limit int) ([]model.Message, error) {
	return s.s.window(ctx, id, limit)
}

// Append stores the messages of one finished turn at the end of a session,
// in one transaction.
func (s *SessionStore) Append(ctx context.Context, id string, msgs []model.Message) error {
	return s.s.appendMessages(ctx, id, msgs)
}

// NewID returns a fresh readable session id: the UTC start time and random
// bits.
func (s *SessionStore) NewID() string { return s.s.newID() }

// Count returns how many messages a session holds and whether it exists.
func (s *SessionStore) Count(ctx context.Context, id string) (int, bool, error) {
	return s.s.count(ctx, id)
}

// Latest returns the id of the most recently used session, or "" when
// there is none.
func (s *SessionStore) Latest(ctx context.Context) (string, error) { return s.s.latest(ctx) }
