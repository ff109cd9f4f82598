package chat

import (
	"context"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// SessionStore is the chat's session persistence for front ends other than
// the terminal (package web), so that a conversation is stored the same way
// whichever front end held it: the same tables, the same window rule, the
// same one-transaction turn.
type SessionStore struct{ s *sessions }

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
	_, err := s.s.st.DB.ExecContext(ctx, `INSERT INTO chat_sessions (id, created_at, updated_ms) VALUES (?, ?, ?)
		ON CONFLICT(id) DO NOTHING`, id, now.UTC().Format(time.RFC3339), now.UnixMilli())
	if err != nil {
		return fmt.Errorf("create chat session %s: %w", id, err)
	}
	return nil
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
