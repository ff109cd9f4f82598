package store

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// Dialect names the SQL engine behind a Store. Components keep one set of
// portable SQL and branch on the dialect only where the engines differ
// (full-text search, locking, column types).
type Dialect string

const (
	// SQLite is the embedded database in the data directory, the default.
	SQLite Dialect = "sqlite"
	// Postgres is a shared PostgreSQL server, for several processes on
	// several machines.
	Postgres Dialect = "postgres"
)

// Options configures a PostgreSQL Store. A nil *Options means the
// defaults.
type Options struct {
	// MaxConns bounds the connections the process holds open; 0 means
	// DefaultMaxConns. Every replica takes up to this many of the server's
	// max_connections.
	MaxConns int
	// MaxIdleConns is how many of them stay open while unused; 0 means
	// MaxConns (a replica under load would otherwise reconnect at once).
	MaxIdleConns int
	// ConnectTimeout bounds one attempt to connect, so that requests fail
	// fast while the server is away instead of waiting for TCP's own
	// timeout; 0 means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// StatementTimeout and LockTimeout are the server's statement_timeout
	// and lock_timeout for every connection: a statement that runs longer,
	// or waits longer for a lock another session holds, fails with an
	// error matching ErrBusy instead of stalling the request behind it
	// for as long as the lock is held. 0 means DefaultStatementTimeout and
	// DefaultLockTimeout; a negative value leaves the server's setting. A
	// statement_timeout or lock_timeout given in the URL wins.
	StatementTimeout, LockTimeout time.Duration
}

// Defaults of Options.
const (
	DefaultMaxConns         = 10
	DefaultConnectTimeout   = 5 * time.Second
	DefaultStatementTimeout = 30 * time.Second
	DefaultLockTimeout      = 5 * time.Second
)

// IsPostgresURL reports whether a --database value selects PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// OpenURL opens the database a --database value names: postgres://… (or
// postgresql://…) is a PostgreSQL server, sqlite:PATH an SQLite file. The
// data directory's own database is opened with Open instead.
func OpenURL(ctx context.Context, rawURL string, opts *Options) (*Store, error) {
	switch {
	case IsPostgresURL(rawURL):
		return openPostgres(ctx, rawURL, opts)
	case strings.HasPrefix(rawURL, "sqlite:"):
		p := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if p == "" {
			return nil, errors.New("the database URL sqlite: names no file; write sqlite:PATH, e.g. sqlite:/home/me/.local/share/agentapp/agentapp.db")
		}
		return OpenFile(p)
	}
	return nil, fmt.Errorf("unsupported database URL %q: use postgres://USER@HOST:PORT/DBNAME for PostgreSQL or sqlite:PATH for an SQLite file", Redact(rawURL))
}

// Redact returns a database URL with its password replaced by "xxxxx", for
// messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		if err != nil && strings.Contains(rawURL, "@") {
			return "(unparsable URL)"
		}
		return rawURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

func openPostgres(ctx context.Context, rawURL string, opts *Options) (*Store, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxIdleConns <= 0 || o.MaxIdleConns > o.MaxConns {
		o.MaxIdleConns = o.MaxConns
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	shown := Redact(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("the database URL %s is not valid: %v (expected postgres://USER:PASSWORD@HOST:PORT/DBNAME?sslmode=…)", shown, redactErr(err, rawURL))
	}
	cfg.ConnectTimeout = o.ConnectTimeout
	for _, t := range []struct {
		param  string
		d, def time.Duration
	}{{"statement_timeout", o.StatementTimeout, DefaultStatementTimeout}, {"lock_timeout", o.LockTimeout, DefaultLockTimeout}} {
		if _, set := cfg.RuntimeParams[t.param]; set || t.d < 0 {
			continue
		}
		cfg.RuntimeParams[t.param] = strconv.FormatInt(cmp.Or(t.d, t.def).Milliseconds(), 10)
	}
	db := sql.OpenDB(&rebindConnector{Connector: stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(o.MaxConns)
	db.SetMaxIdleConns(o.MaxIdleConns)
	// A connection the server dropped is found broken on its next use and
	// replaced; recycling idle ones also sheds connections to a server
	// that was restarted.
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout+5*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		var ue *unavailableError
		if errors.As(err, &ue) {
			err = ue.err
		}
		return nil, fmt.Errorf("cannot reach the PostgreSQL database %s: %v (check that the server runs and the URL's host, port, user and password)", shown, redactErr(err, rawURL))
	}
	s := &Store{DB: db, Path: shown, dialect: Postgres, pgConfig: cfg}
	if err := s.MigrateDialect(pctx, "store", storeSteps, storePostgres); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// redactErr keeps a password in the URL out of an error's text, and puts
// it on one line.
func redactErr(err error, rawURL string) string {
	msg := oneLine(err.Error())
	if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// migrationLockKey is the advisory lock migrations hold on PostgreSQL, so
// that replicas starting together apply each step once. Any fixed number
// works; this one is "agntapp" in ASCII.
const migrationLockKey = 0x61676e74617070

// lockMigrationsOn takes the migration lock on conn on PostgreSQL and
// returns the function that releases it; on SQLite, where write
// transactions already serialise migrations, it does nothing.
func (s *Store) lockMigrationsOn(ctx context.Context, conn *sql.Conn) (func(), error) {
	if s.Dialect() != Postgres {
		return func() {}, nil
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(?)`, migrationLockKey); err != nil {
		return nil, fmt.Errorf("wait for another process's migration: %w", err)
	}
	return func() {
		// The lock belongs to the session: released here, or by the
		// server when the connection ends, so a failed unlock drops it.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(uctx, `SELECT pg_advisory_unlock(?)`, migrationLockKey); err != nil {
			conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}, nil
}

// rebindConnector hands out PostgreSQL connections that accept SQLite's "?"
// placeholders, so the components write their portable SQL once.
type rebindConnector struct{ driver.Connector }

func (c *rebindConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, unavailable(err)
	}
	sc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("store: unexpected pgx connection type %T", conn)
	}
	return &rebindConn{Conn: sc}, nil
}

// rebindConn is a pgx connection that rewrites "?" placeholders to $1, $2…
// Every other method (transactions, pings, session reset) is pgx's own.
type rebindConn struct{ *stdlib.Conn }

func (c *rebindConn) Prepare(query string) (driver.Stmt, error) {
	st, err := c.Conn.Prepare(Rebind(query))
	return st, unavailable(err)
}

func (c *rebindConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.Conn.PrepareContext(ctx, Rebind(query))
	return st, unavailable(err)
}

func (c *rebindConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := c.Conn.ExecContext(ctx, Rebind(query), args)
	return r, unavailable(err)
}

func (c *rebindConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	r, err := c.Conn.QueryContext(ctx, Rebind(query), args)
	return r, unavailable(err)
}

func (c *rebindConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	tx, err := c.Conn.BeginTx(ctx, opts)
	return tx, unavailable(err)
}

func (c *rebindConn) Ping(ctx context.Context) error {
	return unavailable(c.Conn.Ping(ctx))
}

// ErrUnavailable is wrapped by the error of a statement that could not
// reach the PostgreSQL server (it is down, restarting or cut off). The pool
// replaces broken connections by itself, so a later statement succeeds once
// the server is back, without restarting agentapp.
var ErrUnavailable = errors.New("the database is unavailable")

type unavailableError struct{ err error }

// The message is the one every outage shows, whatever the backend said
// (FATAL … 57P01, SQLITE_BUSY, a timeout): the cause is for the logs
// (Cause), not for the client. agentapp reconnects by itself once the
// server is reachable again.
func (e *unavailableError) Error() string { return UnavailableMessage }

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// ErrBusy is wrapped by the error of a statement that the server cancelled
// because it ran past statement_timeout or waited past lock_timeout for a
// lock (see Options), and of one cut off by its context's deadline: the
// database is busy (a long lock, a slow query) or unavailable. The request
// fails fast instead of waiting; the same statement succeeds once the
// database answers again.
var ErrBusy = errors.New("the database is busy or unavailable")

type busyError struct{ err error }

func (e *busyError) Error() string { return UnavailableMessage }

func (e *busyError) Unwrap() []error { return []error{ErrBusy, e.err} }

// pgQueryCanceled and pgLockNotAvailable are the SQLSTATEs of a statement
// cancelled by statement_timeout and of one that gave up at lock_timeout.
const (
	pgQueryCanceled    = "57014"
	pgLockNotAvailable = "55P03"
)

// unavailable marks err as ErrUnavailable when it is a failure to talk to
// the server rather than an error the server reported (a constraint, a
// syntax error) or the caller's own cancellation, and as ErrBusy when the
// server gave up at a timeout or the caller's deadline passed. driver.ErrBadConn stays
// matchable through it, so database/sql still retries on a fresh
// connection.
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == pgQueryCanceled || pgErr.Code == pgLockNotAvailable) ||
		errors.Is(err, context.DeadlineExceeded) {
		var already *busyError
		if errors.As(err, &already) {
			return err
		}
		return &busyError{err: err}
	}
	if errors.As(err, &pgErr) && !pgOutage(pgErr.Code) || errors.Is(err, context.Canceled) {
		return err
	}
	var already *unavailableError
	if errors.As(err, &already) {
		return err
	}
	return &unavailableError{err: err}
}

// pgOutage reports whether a SQLSTATE the server sent says it cannot serve
// now rather than that the statement is wrong: a shutdown or restart
// terminated the connection (57P01-57P03), the connection broke (class
// 08), or the server is out of connections or space (53).
func pgOutage(code string) bool {
	return strings.HasPrefix(code, "57P") || strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53")
}

// Rebind rewrites the "?" placeholders of query to PostgreSQL's $1, $2…
// (and SQLite's numbered ?NNN to $NNN),
// leaving question marks inside string literals, quoted identifiers and
// comments alone.
func Rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 8)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			end := min(j+1, len(query))
			b.WriteString(query[i:end])
			i = end - 1
		case c == '-' && i+1 < len(query) && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = len(query) - i
			}
			b.WriteString(query[i : i+j])
			i += j - 1
		case c == '/' && i+1 < len(query) && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			end := len(query)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			b.WriteString(query[i:end])
			i = end - 1
		case c == '?':
			// ?NNN is SQLite's numbered parameter, PostgreSQL's $NNN.
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j > i+1 {
				b.WriteString("$" + query[i+1:j])
				i = j - 1
				continue
			}
			n++
			fmt.Fprintf(&b, "$%d", n)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// oneLine joins the lines of a message with "; ", dropping repeats: pgx
// reports each connection attempt (TLS, then plain) on a line of its own,
// often with the same cause.
func oneLine(msg string) string {
	if !strings.Contains(msg, "\n") {
		return msg
	}
	var parts []string
	seen := map[string]bool{}
	for _, l := range strings.Split(msg, "\n") {
		l = strings.TrimSuffix(strings.TrimSpace(l), ":")
		if l != "" && !seen[l] {
			seen[l] = true
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
