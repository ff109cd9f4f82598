// Package storetest gives tests a fresh, empty agentapp database on the
// backend the environment selects, so that one test suite runs against
// SQLite and PostgreSQL alike.
//
// AGENTAPP_TEST_BACKEND=postgres selects PostgreSQL at
// AGENTAPP_TEST_DATABASE_URL (the CI script starts a throw-away cluster and
// sets both); anything else, or nothing, selects SQLite in a temporary
// directory. Each PostgreSQL database is a schema of its own, dropped when
// the test ends, so tests and packages running in parallel never see each
// other's tables.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// The environment variables that select the backend.
const (
	EnvBackend = "AGENTAPP_TEST_BACKEND"
	EnvURL     = "AGENTAPP_TEST_DATABASE_URL"
)

// Backend returns the dialect the tests run on.
func Backend() store.Dialect {
	if os.Getenv(EnvBackend) == string(store.Postgres) {
		return store.Postgres
	}
	return store.SQLite
}

// PostgresURL returns the test server's URL. In CI (CI=true) a missing URL
// fails the test, since CI must run the PostgreSQL tests; elsewhere the
// test is skipped.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" || Backend() == store.Postgres {
			t.Fatalf("%s is not set: CI and %s=postgres need a PostgreSQL server (bash .ci/pg-cluster start DIR prints one)", EnvURL, EnvBackend)
		}
		t.Skipf("%s is not set; PostgreSQL tests run in CI (see .ci/pg-cluster)", EnvURL)
	}
	return u
}

// Database is one empty test database; Open opens stores on it.
type Database struct {
	t testing.TB
	// Dialect is the backend.
	Dialect store.Dialect
	// URL is the database's URL: postgres://… for PostgreSQL, sqlite:PATH
	// for SQLite.
	URL string
	// Dir is the SQLite data directory ("" on PostgreSQL).
	Dir string
}

// New returns a fresh empty database on the selected backend.
func New(t testing.TB) *Database {
	t.Helper()
	if Backend() == store.Postgres {
		return NewPostgres(t)
	}
	dir := t.TempDir()
	return &Database{t: t, Dialect: store.SQLite, Dir: dir, URL: "sqlite:" + dir + "/" + store.FileName}
}

// NewPostgres returns a fresh empty PostgreSQL database (a schema of the
// test server's) whatever the selected backend; see PostgresURL for when
// the server is missing.
func NewPostgres(t testing.TB) *Database {
	t.Helper()
	base := PostgresURL(t)
	var b [6]byte
	rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+schema); err != nil {
		admin.Close()
		t.Fatalf("create a test schema on %s: %v", store.Redact(base), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("drop the test schema %s: %v", schema, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return &Database{t: t, Dialect: store.Postgres, URL: u.String()}
}

// Open opens a new Store on the database, closed when the test ends.
func (d *Database) Open() *store.Store {
	d.t.Helper()
	var st *store.Store
	var err error
	if d.Dialect == store.Postgres {
		st, err = store.OpenURL(context.Background(), d.URL, nil)
	} else {
		st, err = store.Open(d.Dir)
	}
	if err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { st.Close() })
	return st
}

// Open returns a store on a fresh empty database of the selected backend,
// closed when the test ends.
func Open(t testing.TB) *store.Store {
	t.Helper()
	return New(t).Open()
}
