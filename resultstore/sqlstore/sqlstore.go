// Package sqlstore keeps cut tool results in the agentapp database (SQLite
// or PostgreSQL), so that a session resumed after a restart can still read
// the results its history refers to. It is resultstore.Memory's bounds on
// disk: per session in bytes and count, and in age.
package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/resultstore"
	"github.com/agentapp/agentapp/store"
)

// migrations are the steps of the "resultstore" component. The text is a
// blob: tool results may hold NUL bytes and invalid UTF-8, which
// PostgreSQL's TEXT refuses.
var migrations = []string{
	`CREATE TABLE tool_results (
		session TEXT NOT NULL, id TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
		body BLOB NOT NULL, bytes INTEGER NOT NULL, created TEXT NOT NULL,
		PRIMARY KEY (session, id))`,
	`CREATE INDEX tool_results_created ON tool_results (created)`,
}

var postgresMigrations = map[int]string{
	1: `CREATE TABLE tool_results (
		session TEXT NOT NULL, id TEXT NOT NULL, server TEXT NOT NULL, tool TEXT NOT NULL,
		body BYTEA NOT NULL, bytes BIGINT NOT NULL, created TEXT NOT NULL,
		PRIMARY KEY (session, id))`,
}

// Options bound the store, as resultstore.MemoryOptions do. A nil *Options,
// or a zero field, means the default.
type Options struct {
	// MaxSessionBytes bounds the text kept per session (default 32 MiB).
	MaxSessionBytes int
	// MaxSessionResults bounds the results kept per session (default 100).
	MaxSessionResults int
	// MaxAge drops results older than this (default 24 hours).
	MaxAge time.Duration
	// MaxTotalBytes bounds the text kept across all sessions (default
	// 1 GiB); Prune drops the oldest results over it.
	MaxTotalBytes int64
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Store is a resultstore.Store in the database. It is safe for concurrent
// use.
type Store struct {
	st   *store.Store
	opts Options
}

var _ resultstore.Store = (*Store)(nil)

// New migrates the database and returns the store.
func New(ctx context.Context, st *store.Store, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxSessionBytes <= 0 {
		o.MaxSessionBytes = 32 << 20
	}
	if o.MaxSessionResults <= 0 {
		o.MaxSessionResults = 100
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 24 * time.Hour
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = 1 << 30
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := st.MigrateDialect(ctx, "resultstore", migrations, postgresMigrations); err != nil {
		return nil, err
	}
	return &Store{st: st, opts: o}, nil
}

// stamp formats a time so that text order is time order.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

// Put implements resultstore.Store: it inserts the result and drops the
// session's oldest results over its caps, in one transaction.
func (s *Store) Put(ctx context.Context, r resultstore.Result) (string, error) {
	if len(r.Text) > s.opts.MaxSessionBytes {
		return "", fmt.Errorf("%w: %d bytes, the limit per session is %d", resultstore.ErrTooLarge, len(r.Text), s.opts.MaxSessionBytes)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := "tr_" + hex.EncodeToString(b[:])
	now := s.opts.Now()
	err := s.st.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_results (session, id, server, tool, body, bytes, created) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.Session, id, r.Server, r.Tool, []byte(r.Text), len(r.Text), stamp(now)); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, bytes FROM tool_results WHERE session = ? ORDER BY created DESC, id DESC`, r.Session)
		if err != nil {
			return err
		}
		var drop []string
		total, n := 0, 0
		for rows.Next() {
			var rid string
			var size int
			if err := rows.Scan(&rid, &size); err != nil {
				rows.Close()
				return err
			}
			total += size
			n++
			if total > s.opts.MaxSessionBytes || n > s.opts.MaxSessionResults {
				drop = append(drop, rid)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, rid := range drop {
			if _, err := tx.ExecContext(ctx, `DELETE FROM tool_results WHERE session = ? AND id = ?`, r.Session, rid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("storing the tool result: %w", err)
	}
	return id, nil
}

// Get implements resultstore.Store.
func (s *Store) Get(ctx context.Context, session, id string) (resultstore.Result, error) {
	r := resultstore.Result{ID: id, Session: session}
	var body []byte
	var created string
	err := s.st.DB.QueryRowContext(ctx, `SELECT server, tool, body, created FROM tool_results WHERE session = ? AND id = ? AND created >= ?`,
		session, id, stamp(s.opts.Now().Add(-s.opts.MaxAge))).Scan(&r.Server, &r.Tool, &body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return resultstore.Result{}, fmt.Errorf("%w: %q", resultstore.ErrNotFound, id)
	}
	if err != nil {
		return resultstore.Result{}, fmt.Errorf("reading the tool result: %w", err)
	}
	r.Text = string(body)
	r.Created, _ = time.Parse(time.RFC3339Nano, created)
	return r, nil
}

// Prune implements resultstore.Store: it deletes results past MaxAge,
// then the oldest results while all of them together are over
// MaxTotalBytes.
func (s *Store) Prune(ctx context.Context) error {
	if _, err := s.st.DB.ExecContext(ctx, `DELETE FROM tool_results WHERE created < ?`, stamp(s.opts.Now().Add(-s.opts.MaxAge))); err != nil {
		return fmt.Errorf("pruning tool results: %w", err)
	}
	var total sql.NullInt64
	if err := s.st.DB.QueryRowContext(ctx, `SELECT CAST(COALESCE(SUM(bytes), 0) AS BIGINT) FROM tool_results`).Scan(&total); err != nil {
		return fmt.Errorf("pruning tool results: %w", err)
	}
	if total.Int64 <= s.opts.MaxTotalBytes {
		return nil
	}
	// The cut-off: the creation time of the newest result that has to go
	// for the rest to fit.
	rows, err := s.st.DB.QueryContext(ctx, `SELECT created, bytes FROM tool_results ORDER BY created`)
	if err != nil {
		return fmt.Errorf("pruning tool results: %w", err)
	}
	over, cutoff := total.Int64-s.opts.MaxTotalBytes, ""
	for rows.Next() && over > 0 {
		var size int64
		if err := rows.Scan(&cutoff, &size); err != nil {
			rows.Close()
			return fmt.Errorf("pruning tool results: %w", err)
		}
		over -= size
	}
	rows.Close()
	if _, err := s.st.DB.ExecContext(ctx, `DELETE FROM tool_results WHERE created <= ?`, cutoff); err != nil {
		return fmt.Errorf("pruning tool results: %w", err)
	}
	return nil
}

// DropSession deletes a session's results.
func (s *Store) DropSession(ctx context.Context, session string) error {
	if _, err := s.st.DB.ExecContext(ctx, `DELETE FROM tool_results WHERE session = ?`, session); err != nil {
		return fmt.Errorf("deleting the session's tool results: %w", err)
	}
	return nil
}

// HasResults reports whether session has a stored result within MaxAge,
// so the host offers readToolResult to a resumed session.
func (s *Store) HasResults(ctx context.Context, session string) (bool, error) {
	var n int
	err := s.st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM tool_results WHERE session = ? AND created >= ?`,
		session, stamp(s.opts.Now().Add(-s.opts.MaxAge))).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("reading the tool results: %w", err)
	}
	return n > 0, nil
}
