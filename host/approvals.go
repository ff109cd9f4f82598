package host

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
)

// approvalMigrations are the steps of the "approvals" component: the tools
// a user allowed for the rest of a session ("always"), kept with the
// session so that --continue and a reopened web page do not ask again.
var approvalMigrations = []string{
	`CREATE TABLE session_approvals (
		session TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL, allowed TEXT NOT NULL,
		PRIMARY KEY (session, server, tool))`,
}

// maxSessionApprovals bounds the tools one session keeps allowed; past it
// the user is asked again, which is never unsafe.
const maxSessionApprovals = 200

// maxApprovalSessions bounds the sessions whose answers are cached in
// memory; the database keeps them all.
const maxApprovalSessions = 10_000

// SessionApprovals remembers, per session, the tools the user allowed for
// the rest of it. With a store the answers outlive the process; without
// one they last as long as it.
type SessionApprovals struct {
	st  *store.Store
	now func() time.Time

	mu    sync.Mutex
	cache map[string]map[string]bool // session → server\x00tool → allowed
}

// OpenSessionApprovals prepares the table in st (nil keeps the answers in
// memory only).
func OpenSessionApprovals(ctx context.Context, st *store.Store, now func() time.Time) (*SessionApprovals, error) {
	if now == nil {
		now = time.Now
	}
	a := &SessionApprovals{st: st, now: now, cache: map[string]map[string]bool{}}
	if st != nil {
		if err := st.Migrate(ctx, "approvals", approvalMigrations); err != nil {
			return nil, fmt.Errorf("opening the table of approvals: %w", err)
		}
	}
	return a, nil
}

// sessionLocked returns session's allowed tools, read from the database
// the first time (a.mu held).
func (a *SessionApprovals) sessionLocked(ctx context.Context, session string) (map[string]bool, error) {
	if m, ok := a.cache[session]; ok {
		return m, nil
	}
	m := map[string]bool{}
	if a.st != nil && session != "" {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		rows, err := a.st.DB.QueryContext(ctx, `SELECT server, tool FROM session_approvals WHERE session = ? ORDER BY allowed LIMIT ?`, session, maxSessionApprovals)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var server, tool string
			if err := rows.Scan(&server, &tool); err != nil {
				return nil, err
			}
			m[server+"\x00"+tool] = true
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	if len(a.cache) >= maxApprovalSessions {
		clear(a.cache)
	}
	a.cache[session] = m
	return m, nil
}

// Allowed reports whether the user allowed server's tool for the rest of
// session. A database that cannot be read answers no: the user is asked.
func (a *SessionApprovals) Allowed(ctx context.Context, session, server, tool string) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := a.sessionLocked(ctx, session)
	return err == nil && m[server+"\x00"+tool]
}

// Allow records that the user allowed server's tool for the rest of
// session. The answer holds in this process even when it cannot be stored;
// the error says it will not outlive it.
func (a *SessionApprovals) Allow(ctx context.Context, session, server, tool string) error {
	a.mu.Lock()
	m, err := a.sessionLocked(ctx, session)
	if err != nil {
		m = map[string]bool{}
		a.cache[session] = m
	}
	if len(m) >= maxSessionApprovals {
		a.mu.Unlock()
		return fmt.Errorf("this session keeps %d allowed tools already; the user is asked again", maxSessionApprovals)
	}
	m[server+"\x00"+tool] = true
	a.mu.Unlock()
	if a.st == nil || session == "" {
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	_, err = a.st.DB.ExecContext(sctx, `INSERT INTO session_approvals (session, server, tool, allowed) VALUES (?, ?, ?, ?) ON CONFLICT (session, server, tool) DO NOTHING`,
		session, server, tool, loadedStamp(a.now()))
	if err != nil {
		return fmt.Errorf("the approval holds for this run only: %w", err)
	}
	return nil
}
