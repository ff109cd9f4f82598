package host

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache keeps the statements of a turn's reads and writes prepared:
// on SQLite parsing a statement costs about as much as running it, and
// every turn runs the same few. Keyed by the query text, which the code
// fixes (a turn's INSERT has one text per batch size up to insertBatch),
// so it stays small. The statements go with the database's connections.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// prepared runs queries through the cache, inside tx when it is set.
type prepared struct {
	s  *sessions
	tx *sql.Tx
}

func (s *sessions) prepared(tx *sql.Tx) prepared { return prepared{s, tx} }

// stmt returns the statement of query, preparing it when it is not yet
// and p is not in a transaction. A transaction holds a connection, and
// preparing takes another from the pool, which may have none left while
// other transactions wait: so a transaction only uses statements prepared
// before it began (sessions.prepare) and runs any other unprepared
// (nil here).
func (p prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c := &p.s.stmts
	c.mu.Lock()
	st := c.m[query]
	c.mu.Unlock()
	if st != nil || p.tx != nil {
		return st, nil
	}
	return p.s.prepare(ctx, query)
}

// prepare prepares query unless it is already, outside any transaction.
func (s *sessions) prepare(ctx context.Context, query string) (*sql.Stmt, error) {
	c := &s.stmts
	c.mu.Lock()
	st := c.m[query]
	c.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := s.st.DB.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if had := c.m[query]; had != nil { // prepared at the same time
		st.Close()
		return had, nil
	}
	if c.m == nil {
		c.m = map[string]*sql.Stmt{}
	}
	c.m[query] = st
	return st, nil
}

func (p prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.tx.ExecContext(ctx, query, args...)
	}
	if p.tx != nil {
		st = p.tx.StmtContext(ctx, st)
	}
	return st.ExecContext(ctx, args...)
}

func (p prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return p.tx.QueryContext(ctx, query, args...)
	}
	if p.tx != nil {
		st = p.tx.StmtContext(ctx, st)
	}
	return st.QueryContext(ctx, args...)
}

// QueryRowContext is QueryContext for one row; a failed preparation is
// reported by Scan, as sql.DB's is.
func (p prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil || st == nil {
		// A query that cannot be prepared cannot run either: run it
		// unprepared, so that Scan returns the database's own error.
		if p.tx != nil {
			return p.tx.QueryRowContext(ctx, query, args...)
		}
		return p.s.st.DB.QueryRowContext(ctx, query, args...)
	}
	if p.tx != nil {
		st = p.tx.StmtContext(ctx, st)
	}
	return st.QueryRowContext(ctx, args...)
}

// closeStmts closes the prepared statements; a later query prepares
// again. The host closes them with itself, since the store may outlive it.
func (s *sessions) closeStmts() error {
	c := &s.stmts
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, st := range c.m {
		errs = append(errs, st.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}
