package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
)

// UnavailableMessage is what a request that met a database outage says,
// on every backend and front end: one shape, so that a client (and a
// person) learns one thing to do.
const UnavailableMessage = "the database is unavailable, try again shortly"

// RetryAfter is how long an HTTP client is told to wait (Retry-After)
// after an outage.
const RetryAfter = 5 * time.Second

// IsUnavailable reports whether err is a database outage: PostgreSQL down,
// restarting, cut off, or past its lock or statement timeout (ErrUnavailable,
// ErrBusy), or SQLite locked by another writer past its busy timeout. The
// same request may succeed when tried again shortly.
func IsUnavailable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, ErrBusy)
}

// Cause returns the backend's own message behind an outage, for logs; it
// is err's message for any other error.
func Cause(err error) string {
	var u *unavailableError
	if errors.As(err, &u) {
		return oneLine(u.err.Error())
	}
	var b *busyError
	if errors.As(err, &b) {
		return oneLine(b.err.Error())
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// Unavailable lets a caller outside this package (a transport that must
// not import it) tell an outage by its method, as errors.As finds it.
func (e *unavailableError) Unavailable() bool { return true }

// Unavailable: see unavailableError.Unavailable.
func (e *busyError) Unavailable() bool { return true }

// sqliteBusy marks a SQLite error that says another connection holds the
// database (SQLITE_BUSY, SQLITE_LOCKED and their extended codes) as
// ErrBusy; other errors are returned as they are.
func sqliteBusy(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		if code := se.Code() & 0xff; code == 5 || code == 6 {
			var already *busyError
			if !errors.As(err, &already) {
				return &busyError{err: err}
			}
		}
	}
	return err
}

// MarkUnavailable returns err marked as a database outage (IsUnavailable
// reports true, its message is UnavailableMessage, Cause gives err's), for
// a caller that learns of an outage the store did not see: a wrapper's own
// deadline, or a test.
func MarkUnavailable(err error) error {
	if err == nil || IsUnavailable(err) {
		return err
	}
	return &unavailableError{err: err}
}

// CheckWrite writes one row (the meta key "write_check") and reports
// whether the database took it. A ping reads only: on a full disk every
// read succeeds while every write fails, and a replica that says it is
// ready then fails all its work. A database merely busy (another
// writer's lock past its timeout) is not reported: it serves again in a
// moment, and a readiness check must not take a replica out for it.
func (s *Store) CheckWrite(ctx context.Context) error {
	err := s.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('write_check', ?)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, time.Now().UTC().Format(time.RFC3339Nano))
		return err
	})
	if err != nil && (errors.Is(err, ErrBusy) || errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("the database cannot be written: %s", Cause(err))
	}
	return nil
}

// IsDiskFull reports whether err says the disk under the database is full
// (SQLite's SQLITE_FULL, which a size limit also gives; PostgreSQL's
// disk_full, 53100).
func IsDiskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == 13 {
		return true
	}
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "53100"
}

// Checkpoint copies SQLite's write-ahead log into the database and
// truncates the log, giving its space back: after a write failed on a full
// disk the log may hold megabytes that not even a removal could then
// append to. On PostgreSQL it does nothing.
func (s *Store) Checkpoint(ctx context.Context) error {
	if s.dialect != SQLite {
		return nil
	}
	_, err := s.DB.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	return err
}
