// Package store opens agentapp's database and applies the schema
// migrations of each component that keeps data in it.
//
// The database is SQLite in the data directory unless a PostgreSQL URL is
// given (OpenURL): one server that several agentapp processes on several
// machines share. The components write portable SQL with "?" placeholders
// and ask Dialect where the engines differ.
//
// The database is shared by processes: a chat and an `agentapp serve` it
// spawned use it at the same time. WAL mode lets readers run beside one
// writer, the busy timeout makes a writer wait for another instead of
// failing with "database is locked", and write transactions take the write
// lock up front (BEGIN IMMEDIATE) so two of them never deadlock on upgrade.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentapp/agentapp/internal/private"
	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite" // registers the "sqlite" driver (unavailable.go reads its errors)
)

// FileName is the database's file name inside the data directory.
const FileName = "agentapp.db"

// JournalSizeLimit bounds SQLite's write-ahead log after a checkpoint.
const JournalSizeLimit = 4 << 20

// BusyTimeout is how long a statement waits for another connection's lock.
const BusyTimeout = 10 * time.Second

// Store is an open database.
type Store struct {
	DB *sql.DB
	// Path is the SQLite file, or the PostgreSQL URL without its password.
	Path string

	dialect Dialect
	// pgConfig is the PostgreSQL connection configuration, for Listen's
	// connection of its own.
	pgConfig *pgx.ConnConfig

	// applied is what schema_migrations held when the first migration
	// check read it, so a process's start checks every component with one
	// read instead of a write transaction per step.
	applied appliedSteps

	// watches are the Watches opened on this store and not yet closed,
	// which Close closes first.
	watchMu sync.Mutex
	watches map[*Watch]struct{}

	// group batches GroupTx's transactions (group.go).
	group groupCommit
}

// appliedSteps is one read of the applied migrations of every component,
// which MigrateDialect consults once per component: only at start, where
// each component checks its schema right after the others, is the read
// known to be recent. Any later check reads the table itself.
type appliedSteps struct {
	plain bool // no one read, no single transaction: the plain path, for tests
	mu    sync.Mutex
	read  bool
	at    time.Time // when it was read
	// byComponent is nil when the table could not be read (a new
	// database): every check then takes the plain path.
	byComponent map[string]applied
}

// appliedFresh is how long the one read of schema_migrations answers
// checks: the components of a start check theirs within milliseconds.
const appliedFresh = 5 * time.Second

// applied summarises one component's rows in schema_migrations.
type applied struct{ count, max int }

// Dialect returns the SQL engine of the store.
func (s *Store) Dialect() Dialect {
	if s.dialect == "" {
		return SQLite
	}
	return s.dialect
}

// EnvDataDir names the environment variable that overrides the data
// directory.
const EnvDataDir = "AGENTAPP_DATA_DIR"

// DefaultDir returns the data directory: $AGENTAPP_DATA_DIR, else
// "agentapp" under the user's data directory ($XDG_DATA_HOME or
// ~/.local/share on Unix, %AppData% on Windows, ~/Library/Application
// Support on macOS).
//
// The variables are read through getenv (os.Getenv in the program, a map
// in tests), so the package reads no environment of its own; a nil getenv
// means none is set. The home directory itself comes from os.UserHomeDir
// and os.UserConfigDir, the platform's own answer to where a user's files
// live.
func DefaultDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if d := getenv(EnvDataDir); d != "" {
		return d, nil
	}
	return userDataDir(getenv)
}

// Open opens (creating if needed) the database in dir. The directory is
// made, or restricted to, mode 0700: it holds the database, the chat line
// history and the audit log, which no other local user should list or read.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("store: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the data directory %s: %w (set AGENTAPP_DATA_DIR or --data-dir to a writable directory)", dir, err)
	}
	if err := private.Restrict(dir); err != nil {
		return nil, fmt.Errorf("%w (chmod 700 the data directory, or choose another with AGENTAPP_DATA_DIR or --data-dir)", err)
	}
	path := filepath.Join(dir, FileName)
	return OpenFile(path)
}

// maxConns bounds the database's connection pool. SQLite in WAL mode runs
// readers alongside one writer; more connections than cores buy little.
const maxConns = 4

// OpenFile opens (creating if needed) the database at path.
//
// The database and its -wal and -shm files are readable by their owner
// only (0600). SQLite would create the database 0644 (0666 less the
// umask) and gives the -wal and -shm files the database's mode, so the
// database is created here first, and files an older version left more
// open are tightened.
func OpenFile(path string) (*Store, error) { return openFile(path, false) }

// openFile is OpenFile; plain turns MigrateDialect's fast paths off (the one
// read of the applied migrations, the single transaction), for the
// differential tests.
func openFile(path string, plain bool) (*Store, error) {
	if err := private.CreateFile(path); err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := private.Restrict(path + suffix); err != nil {
			return nil, fmt.Errorf("open database %s: %w", path, err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// A checkpointed log is cut back to this size: the log of one large
	// write (an ingest) would otherwise keep its megabytes on disk for
	// good, and on a full disk no later write could be appended.
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", JournalSizeLimit))
	q.Add("_txlock", "immediate")
	dsn := "file:" + filepath.ToSlash(path) + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// Keep every connection the pool may open. database/sql keeps only 2
	// idle by default, so under 3 or 4 concurrent queries (an MCP client
	// with calls in flight) it closed connections and reopened them at
	// once: each open runs the pragmas above and parses the schema, and
	// every prepared statement is prepared again on the new connection.
	// That churn was a fifth of serve's CPU with 16 calls in flight.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	ctx, cancel := context.WithTimeout(context.Background(), BusyTimeout+5*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{DB: db, Path: path, dialect: SQLite}
	s.applied.plain = plain
	if err := s.MigrateDialect(ctx, "store", storeSteps, storePostgres); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.watchMu.Lock()
	ws := s.watches
	s.watches = nil
	s.watchMu.Unlock()
	var errs []error
	for w := range ws {
		errs = append(errs, w.Close())
	}
	return errors.Join(append(errs, s.DB.Close())...)
}

// storeSteps is the store's own schema.
var storeSteps = []string{
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
	// The guards' audit trail when it lives in the database (audit.go).
	`CREATE TABLE audit_log (id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL, event TEXT NOT NULL, record TEXT NOT NULL)`,
}

// storePostgres is storeSteps' PostgreSQL text where it differs.
var storePostgres = map[int]string{
	2: `CREATE TABLE audit_log (id BIGSERIAL PRIMARY KEY, at_ms BIGINT NOT NULL, event TEXT NOT NULL, record TEXT NOT NULL)`,
}

// ErrSchemaTooNew is wrapped by Migrate's error when the database holds a
// component's schema from a newer agentapp than this one.
var ErrSchemaTooNew = errors.New("the database schema is newer than this agentapp")

type tooNewError struct {
	component     string
	have, applied int
}

func (e *tooNewError) Error() string {
	return fmt.Sprintf("the database's %s schema is at version %d but this agentapp knows only %d: a newer agentapp has upgraded it; run that version (or a newer one), or point this one at another database", e.component, e.applied, e.have)
}

func (e *tooNewError) Is(target error) bool { return target == ErrSchemaTooNew }

// Migrate applies, in order, the steps of a component's schema that this
// database has not seen yet: in one transaction, or, when a step fails,
// each in its own, so the steps before the failing one stay applied. Steps are
// numbered by their position: never edit or reorder a released step, only
// append new ones. Components are independent, so packages add their own
// tables without a central list. A database whose schema for the component
// is newer than steps is refused with an error wrapping ErrSchemaTooNew.
//
// The steps run as they are on either engine; MigrateDialect takes
// replacements for the steps PostgreSQL needs written differently.
func (s *Store) Migrate(ctx context.Context, component string, steps []string) error {
	return s.MigrateDialect(ctx, component, steps, nil)
}

// MigrateDialect is Migrate with PostgreSQL's own text for some steps:
// postgres maps a step's number (from 1) to the SQL run in its place there.
// Portable steps appended later need no entry.
//
// On PostgreSQL the steps run under an advisory lock, so of several
// replicas starting at once one migrates and the others wait, then find
// the steps applied; SQLite's write lock serialises them already.
func (s *Store) MigrateDialect(ctx context.Context, component string, steps []string, postgres map[int]string) error {
	if done, err := s.checkApplied(ctx, component, len(steps)); done {
		return err
	}
	conn, err := s.DB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	defer conn.Close()
	unlock, err := s.lockMigrationsOn(ctx, conn)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	defer unlock()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		component TEXT NOT NULL, version INTEGER NOT NULL, applied_at TEXT NOT NULL,
		PRIMARY KEY (component, version))`); err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	var applied int
	if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations WHERE component = ?`, component).Scan(&applied); err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	if applied > len(steps) {
		return &tooNewError{component: component, have: len(steps), applied: applied}
	}
	// apply runs step i unless the database has it already.
	apply := func(tx *sql.Tx, i int) error {
		version, step := i+1, steps[i]
		if s.Dialect() == Postgres {
			if alt, ok := postgres[version]; ok {
				step = alt
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE component = ? AND version = ?`, component, version).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, step); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (component, version, applied_at) VALUES (?, ?, ?)`,
			component, version, time.Now().UTC().Format(time.RFC3339))
		return err
	}
	// All the steps in one transaction first: a new database applies
	// dozens, and each commit is a round of file locks and a WAL write.
	// If any step fails, nothing of it stays, and the steps run again each
	// in its own transaction, which keeps the steps before the failing one
	// and reports it.
	if len(steps) > 1 && !s.applied.plain {
		if err := connTx(ctx, conn, func(tx *sql.Tx) error {
			for i := range steps {
				if err := apply(tx, i); err != nil {
					return err
				}
			}
			return nil
		}); err == nil {
			return nil
		}
	}
	for i := range steps {
		if err := connTx(ctx, conn, func(tx *sql.Tx) error { return apply(tx, i) }); err != nil {
			return fmt.Errorf("migrate %s to version %d: %w", component, i+1, err)
		}
	}
	return nil
}

// checkApplied answers a component's migration check from the one read of
// schema_migrations, when it can: done with a nil error when every one of
// the n steps is applied (versions 1 to n, each once: the plain path would
// skip them all), done with the plain path's error when the database's
// schema is newer. Otherwise (not read yet and unreadable, a component
// already checked, or steps to apply) the plain path runs.
func (s *Store) checkApplied(ctx context.Context, component string, n int) (done bool, err error) {
	a := &s.applied
	if a.plain {
		return false, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.read {
		a.read, a.at = true, time.Now()
		a.byComponent = s.readApplied(ctx)
	}
	got, ok := a.byComponent[component]
	if !ok || time.Since(a.at) > appliedFresh {
		// A component first checked long after the start (another
		// process may have migrated since) reads the table itself.
		return false, nil
	}
	delete(a.byComponent, component)
	switch {
	case got.max > n:
		return true, &tooNewError{component: component, have: n, applied: got.max}
	case got.count == n && got.max == n:
		return true, nil
	}
	return false, nil
}

// readApplied reads every component's applied steps, or nil if it cannot
// (no schema_migrations table yet, or any error, which the plain path then
// meets and reports itself).
func (s *Store) readApplied(ctx context.Context) map[string]applied {
	rows, err := s.DB.QueryContext(ctx, `SELECT component, COUNT(*), MAX(version) FROM schema_migrations GROUP BY component`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[string]applied{}
	for rows.Next() {
		var c string
		var a applied
		if err := rows.Scan(&c, &a.count, &a.max); err != nil {
			return nil
		}
		out[c] = a
	}
	if rows.Err() != nil {
		return nil
	}
	return out
}

// Versions returns the schema version of each component in the database.
func (s *Store) Versions(ctx context.Context) (map[string]int, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT component, MAX(version) FROM schema_migrations GROUP BY component`)
	if err != nil {
		return nil, fmt.Errorf("read the schema versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var c string
		var v int
		if err := rows.Scan(&c, &v); err != nil {
			return nil, fmt.Errorf("read the schema versions: %w", err)
		}
		out[c] = v
	}
	return out, rows.Err()
}

func connTx(ctx context.Context, conn *sql.Conn, fn func(*sql.Tx) error) (err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return sqliteBusy(err)
	}
	return sqliteBusy(tx.Commit())
}

// Tx runs fn in a write transaction, committing if it returns nil and rolling
// back otherwise.
func (s *Store) Tx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return sqliteBusy(err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
		if err != nil {
			tx.Rollback()
		}
	}()
	if err = fn(tx); err != nil {
		return sqliteBusy(err)
	}
	return sqliteBusy(tx.Commit())
}

// SchemaVersion is the version of the store's own schema, for `agentapp db
// status`.
func SchemaVersion() int { return len(storeSteps) }
