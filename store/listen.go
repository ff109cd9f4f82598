package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// Notify sends a notification on channel to every process listening to
// it (Listen) when tx commits; a rolled-back transaction sends nothing. On
// SQLite it does nothing: processes there are not told of each other's
// changes.
func (s *Store) Notify(ctx context.Context, tx *sql.Tx, channel string) error {
	if s.Dialect() != Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_notify(?, '')`, channel)
	return err
}

// Listen calls fn for each notification sent on channel (with NOTIFY or
// pg_notify, by any process) until ctx ends, and returns ctx's error. It
// keeps a connection of its own outside the pool. When that connection is
// lost it reconnects, waiting from one second up to 30 between attempts,
// and logs each loss on logger (nil discards). fn is called with an empty
// payload once each time the connection is (re)established, since
// notifications sent while it was away are lost: a caller that refreshes
// on fn never misses a change. On SQLite it returns an error at once.
func (s *Store) Listen(ctx context.Context, channel string, logger *slog.Logger, fn func(payload string)) error {
	if s.Dialect() != Postgres || s.pgConfig == nil {
		return errors.New("store: LISTEN needs a PostgreSQL database")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	backoff := time.Second
	for {
		err := s.listenOnce(ctx, channel, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		logger.Warn(fmt.Sprintf("lost the database notifications (%v); reconnecting in %v", err, backoff))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, channel string, fn func(string)) error {
	conn, err := pgx.ConnectConfig(ctx, s.pgConfig.Copy())
	if err != nil {
		return unavailable(err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	fn("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Payload)
	}
}
