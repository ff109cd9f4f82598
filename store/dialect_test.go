package store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

func TestRebind(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE a = ? AND b = ?`, `SELECT a FROM t WHERE a = $1 AND b = $2`},
		{`SELECT '?', "?x", ? -- what?` + "\n" + `, ?`, `SELECT '?', "?x", $1 -- what?` + "\n" + `, $2`},
		{`SELECT 'it''s?', ? /* ? */ , ?`, `SELECT 'it''s?', $1 /* ? */ , $2`},
		{`SELECT 'unterminated ?`, `SELECT 'unterminated ?`},
		{`WHERE substr(id, 1, length(?1)) = ?1`, `WHERE substr(id, 1, length($1)) = $1`},
	} {
		if got := store.Rebind(c.in); got != c.want {
			t.Errorf("Rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestPostgresRequiredInCI(t *testing.T) {
	// Fails in CI when the URL is missing (PostgresURL's rule), so the
	// PostgreSQL suites can never be skipped there unnoticed.
	u := storetest.PostgresURL(t)
	if !store.IsPostgresURL(u) {
		t.Fatalf("%s = %q is not a postgres:// URL", storetest.EnvURL, u)
	}
}

func TestMigrateRefusesNewerSchema(t *testing.T) {
	db := storetest.New(t)
	st := db.Open()
	ctx := context.Background()
	steps := []string{`CREATE TABLE n1 (id INTEGER)`, `CREATE TABLE n2 (id INTEGER)`, `CREATE TABLE n3 (id INTEGER)`}
	if err := st.Migrate(ctx, "newer", steps); err != nil {
		t.Fatal(err)
	}
	err := db.Open().Migrate(ctx, "newer", steps[:2])
	if !errors.Is(err, store.ErrSchemaTooNew) {
		t.Fatalf("an older binary's migration: err = %v, want ErrSchemaTooNew", err)
	}
	for _, want := range []string{"newer schema is at version 3", "knows only 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	v, err := st.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v["newer"] != 3 || v["store"] != store.SchemaVersion() {
		t.Errorf("Versions = %v, want newer:3 store:%d", v, store.SchemaVersion())
	}
}

func TestMigrateDialectUsesPostgresText(t *testing.T) {
	db := storetest.New(t)
	st := db.Open()
	ctx := context.Background()
	err := st.MigrateDialect(ctx, "alt", []string{`CREATE TABLE alt_sqlite (id INTEGER)`},
		map[int]string{1: `CREATE TABLE alt_pg (id BIGINT)`})
	if err != nil {
		t.Fatal(err)
	}
	want := "alt_sqlite"
	if st.Dialect() == store.Postgres {
		want = "alt_pg"
	}
	var n int
	if err := st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+want).Scan(&n); err != nil {
		t.Fatalf("%s dialect: table %s missing: %v", st.Dialect(), want, err)
	}
}

// TestPostgresConcurrentMigrationsApplyOnce starts many stores on one
// database at once, as replicas do; the advisory lock lets each step run
// exactly once. Without it, two of them create the same table and fail.
func TestPostgresConcurrentMigrationsApplyOnce(t *testing.T) {
	db := storetest.NewPostgres(t)
	ctx := context.Background()
	steps := []string{
		`CREATE TABLE c1 (id INTEGER PRIMARY KEY)`,
		`INSERT INTO c1 (id) VALUES (1)`,
		`ALTER TABLE c1 ADD COLUMN name TEXT`,
	}
	const n = 8
	stores := make([]*store.Store, n)
	for i := range stores {
		stores[i] = db.Open()
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, st := range stores {
		wg.Go(func() { errs[i] = st.Migrate(ctx, "conc", steps) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("store %d: %v", i, err)
		}
	}
	var rows, versions int
	stores[0].DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM c1`).Scan(&rows)
	stores[0].DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE component = 'conc'`).Scan(&versions)
	if rows != 1 || versions != 3 {
		t.Errorf("rows = %d, versions = %d; want 1 and 3", rows, versions)
	}
}

func TestOpenURLErrorsAreClear(t *testing.T) {
	ctx := context.Background()
	_, err := store.OpenURL(ctx, "mysql://root:hunter2@db/x", nil)
	if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unsupported scheme: err = %v; want a hint at postgres:// without the password", err)
	}
	// A port nothing listens on: refused at once, the password not shown.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, err = store.OpenURL(ctx, "postgres://u:hunter2@"+addr+"/x?sslmode=disable", nil)
	if err == nil || !strings.Contains(err.Error(), "cannot reach the PostgreSQL database") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("unreachable server: err = %v", err)
	}
	if d := time.Since(start); d > store.DefaultConnectTimeout+5*time.Second {
		t.Errorf("took %v to give up", d)
	}
}

// proxy forwards loopback connections to the PostgreSQL server until it is
// stopped, so a test can make the database go away and come back.
type proxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	l     net.Listener
	conns []net.Conn
}

func (p *proxy) start() {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.l, p.addr = l, l.Addr().String()
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

// stop closes the listener and cuts every forwarded connection.
func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.l.Close()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// TestPostgresOutageFailsFastAndRecovers cuts the connection to the
// server: queries fail at once with an error, and succeed again once the
// server is reachable, on the same Store.
func TestPostgresOutageFailsFastAndRecovers(t *testing.T) {
	db := storetest.NewPostgres(t)
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: u.Host, addr: "127.0.0.1:0"}
	p.start()
	t.Cleanup(p.stop)
	u.Host = p.addr
	st, err := store.OpenURL(context.Background(), u.String(), &store.Options{MaxConns: 3, ConnectTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	query := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var n int
		return st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	}
	if err := query(); err != nil {
		t.Fatal(err)
	}
	p.stop()
	// The first query finds its connection cut, the second finds no
	// server to connect to; both fail at once with ErrUnavailable.
	for range 2 {
		start := time.Now()
		err := query()
		if !errors.Is(err, store.ErrUnavailable) {
			t.Fatalf("with the server gone: err = %v, want ErrUnavailable", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the failing query took %v; it should fail fast", d)
		}
		t.Logf("with the server gone: %v", err)
	}
	p.start()
	if err := query(); err != nil {
		t.Fatalf("after the server came back: %v", err)
	}
}

// TestPostgresListenReconnects receives notifications sent by another
// store, loses its connection, and receives them again once the server is
// back; each (re)connection is reported with an empty payload.
func TestPostgresListenReconnects(t *testing.T) {
	db := storetest.NewPostgres(t)
	sender := db.Open()
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, target: u.Host, addr: "127.0.0.1:0"}
	p.start()
	t.Cleanup(p.stop)
	u.Host = p.addr
	st, err := store.OpenURL(context.Background(), u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Listen(ctx, "test_channel", nil, func(p string) { got <- p }) }()
	defer func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Listen returned %v, want context.Canceled", err)
		}
	}()
	wait := func(want string) {
		t.Helper()
		select {
		case p := <-got:
			if p != want {
				t.Fatalf("payload %q, want %q", p, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no notification %q", want)
		}
	}
	notify := func(payload string) {
		t.Helper()
		if _, err := sender.DB.Exec(`SELECT pg_notify('test_channel', ?)`, payload); err != nil {
			t.Fatal(err)
		}
	}
	wait("") // connected
	notify("one")
	wait("one")
	p.stop()
	p.start()
	wait("") // reconnected: whatever was sent meanwhile is to be re-read
	notify("two")
	wait("two")
}

func TestListenNeedsPostgres(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Listen(context.Background(), "c", nil, func(string) {}); err == nil {
		t.Error("Listen on SQLite: no error")
	}
}

// TestPostgresLockAndStatementTimeouts: a statement behind a lock another
// session holds used to wait for as long as the lock was held (39 s behind
// a 40 s LOCK), and a slow statement for as long as it ran. They fail at
// LockTimeout and StatementTimeout with an error matching ErrBusy that
// says "the database is unavailable, try again shortly", and the same Store answers
// once the lock is gone.
func TestPostgresLockAndStatementTimeouts(t *testing.T) {
	db := storetest.NewPostgres(t)
	ctx := context.Background()
	holder, err := store.OpenURL(ctx, db.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	st, err := store.OpenURL(ctx, db.URL, &store.Options{LockTimeout: 200 * time.Millisecond, StatementTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tx, err := holder.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	// The lock ends after 20 s at the latest, so that a store without the
	// timeouts gets its answer and the test fails instead of hanging.
	release := time.AfterFunc(20*time.Second, func() { tx.Rollback() })
	defer release.Stop()
	query := func() error {
		qctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		var n int
		return st.DB.QueryRowContext(qctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	}
	err = query()
	if !errors.Is(err, store.ErrBusy) || err.Error() != store.UnavailableMessage || !strings.Contains(store.Cause(err), "55P03") {
		t.Fatalf("a query behind a held lock: err = %v, want ErrBusy", err)
	}
	t.Logf("behind the lock: %v", err)
	tx.Rollback()
	if err := query(); err != nil {
		t.Fatalf("once the lock is gone: %v", err)
	}
	_, err = st.DB.ExecContext(ctx, `SELECT pg_sleep(10)`)
	if !errors.Is(err, store.ErrBusy) {
		t.Fatalf("a statement running past StatementTimeout: err = %v, want ErrBusy", err)
	}
	// The URL's own setting wins over the default.
	lifted, err := store.OpenURL(ctx, db.URL+"&statement_timeout=0", &store.Options{StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer lifted.Close()
	if _, err := lifted.DB.ExecContext(ctx, `SELECT pg_sleep(0.3)`); err != nil {
		t.Errorf("statement_timeout=0 in the URL: %v", err)
	}
}
