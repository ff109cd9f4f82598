package support_test

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/support"
)

// testDBs maps a test's data directory to its PostgreSQL test database
// when the suite runs on PostgreSQL, so that a test opening the same
// directory twice opens the same database twice.
var testDBs sync.Map // string -> *storetest.Database

// testDB returns the PostgreSQL database standing for dir.
func testDB(t testing.TB, dir string) *storetest.Database {
	if db, ok := testDBs.Load(dir); ok {
		return db.(*storetest.Database)
	}
	db, _ := testDBs.LoadOrStore(dir, storetest.NewPostgres(t))
	return db.(*storetest.Database)
}

// openService opens the database of dir and a Service on it, closing the
// database when the test ends. The database is SQLite in dir, or on the
// PostgreSQL backend (storetest.Backend) a test database standing for dir;
// a helper process is given that database's URL (helperURLEnv).
func openService(t testing.TB, dir string, opts ...support.Option) (*support.Service, *store.Store) {
	t.Helper()
	var st *store.Store
	var err error
	switch {
	case os.Getenv(helperURLEnv) != "":
		st, err = store.OpenURL(context.Background(), os.Getenv(helperURLEnv), nil)
	case storetest.Backend() == store.Postgres:
		st, err = store.OpenURL(context.Background(), testDB(t, dir).URL, nil)
	default:
		st, err = store.Open(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := support.New(context.Background(), st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() }) // runs before the store's Close
	return svc, st
}

// fakeClock is a settable clock safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// mustJSON encodes v or fails the test.
func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// countRows returns the number of rows of a table.
func countRows(t testing.TB, st *store.Store, table string) int {
	t.Helper()
	var n int
	if err := st.DB.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
