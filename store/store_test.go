package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestMigrateAppliesEachStepOnce(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	steps := []string{
		`CREATE TABLE t (id INTEGER PRIMARY KEY)`,
		`ALTER TABLE t ADD COLUMN name TEXT`,
	}
	for range 2 {
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx, "test", steps); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.DB.QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE component = 'test'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("applied %d migrations, want 2", n)
	}
	var mode string
	if err := s.DB.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	if s.Path != filepath.Join(dir, FileName) {
		t.Errorf("Path = %q", s.Path)
	}
}

func TestMigrateFailedStepRollsBack(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = s.Migrate(context.Background(), "bad", []string{`CREATE TABLE ok (id INTEGER)`, `NOT SQL`})
	if err == nil {
		t.Fatal("want error for a bad step")
	}
	var n int
	s.DB.QueryRow(`SELECT COUNT(*) FROM schema_migrations WHERE component = 'bad'`).Scan(&n)
	if n != 1 {
		t.Fatalf("recorded %d versions, want 1 (the good step only)", n)
	}
}

func TestDefaultDirHonoursEnv(t *testing.T) {
	env := map[string]string{"AGENTAPP_DATA_DIR": "/tmp/x", "XDG_DATA_HOME": "/tmp/xdg"}
	getenv := func(k string) string { return env[k] }
	d, err := DefaultDir(getenv)
	if err != nil || d != "/tmp/x" {
		t.Fatalf("DefaultDir() = %q, %v", d, err)
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		return
	}
	delete(env, "AGENTAPP_DATA_DIR")
	if d, err := DefaultDir(getenv); err != nil || d != filepath.Join("/tmp/xdg", "agentapp") {
		t.Errorf("DefaultDir() with XDG_DATA_HOME = %q, %v; want /tmp/xdg/agentapp", d, err)
	}
	// Only getenv is consulted: a variable in the process environment that
	// getenv does not report is not seen.
	t.Setenv("AGENTAPP_DATA_DIR", "/tmp/from-process")
	t.Setenv("XDG_DATA_HOME", "/tmp/xdg-process")
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory:", err)
	}
	want := filepath.Join(home, ".local", "share", "agentapp")
	if d, err := DefaultDir(nil); err != nil || d != want {
		t.Errorf("DefaultDir(nil) = %q, %v; want %q, not the process environment's choice", d, err, want)
	}
}

// TestPoolKeepsItsConnections checks that connections opened for
// concurrent queries stay open afterwards: reopening a SQLite connection
// reruns the pragmas and the schema parse, and re-prepares statements.
func TestPoolKeepsItsConnections(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	var conns []*sql.Conn
	for range maxConns {
		c, err := s.DB.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		c.Close()
	}
	st := s.DB.Stats()
	if st.Idle != maxConns || st.MaxIdleClosed != 0 {
		t.Fatalf("after %d concurrent connections: %d idle, %d closed for the idle limit; want all kept", maxConns, st.Idle, st.MaxIdleClosed)
	}
}

// TestFileModes: a fresh data directory is 0700 and the database with its
// -wal and -shm files 0600; a directory and files an older version made
// 0755 and 0644 are tightened on the next Open.
func TestFileModes(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits")
	}
	dir := filepath.Join(t.TempDir(), "data")
	check := func(when string) {
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// A write makes sure the -wal and -shm files exist.
		if _, err := s.DB.Exec(`INSERT OR REPLACE INTO meta (key, value) VALUES ('k', 'v')`); err != nil {
			t.Fatal(err)
		}
		want := map[string]os.FileMode{dir: 0o700}
		for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
			want[filepath.Join(dir, name)] = 0o600
		}
		for path, mode := range want {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatalf("%s: %v", when, err)
			}
			if got := fi.Mode().Perm(); got != mode {
				t.Errorf("%s: %s has mode %o, want %o", when, path, got, mode)
			}
		}
	}
	check("fresh data dir")
	os.Chmod(dir, 0o755)
	for _, name := range []string{FileName, FileName + "-wal", FileName + "-shm"} {
		os.Chmod(filepath.Join(dir, name), 0o644)
	}
	check("after chmod 644")
}

// TestMigrationChecksMatchThePlainPath holds MigrateDialect's fast paths
// (the start-up's one read of the applied migrations, all steps in one
// transaction) to the plain path (a read and a transaction per step): from
// the same database, every component's check gives the same error text and
// leaves the same rows and schema, whether the component is up to date,
// new, behind, missing a step in the middle, newer than the binary, or has
// a step that fails.
func TestMigrationChecksMatchThePlainPath(t *testing.T) {
	ctx := context.Background()
	steps := []string{`CREATE TABLE a (id INTEGER)`, `CREATE TABLE b (id INTEGER)`, `CREATE TABLE c (id INTEGER)`}
	// seed makes a database whose schema_migrations holds versions of
	// each component (the tables the steps create are made alike).
	seed := func(t *testing.T, versions map[string][]int) string {
		path := filepath.Join(t.TempDir(), FileName)
		s, err := openFile(path, true)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for component, vs := range versions {
			for _, v := range vs {
				if v <= len(steps) {
					if _, err := s.DB.Exec(`CREATE TABLE IF NOT EXISTS ` + component + `_` + string(rune('a'+v-1)) + ` (id INTEGER)`); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := s.DB.Exec(`INSERT OR IGNORE INTO schema_migrations (component, version, applied_at) VALUES (?, ?, 'then')`, component, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		return path
	}
	stepsOf := func(component string) []string {
		out := make([]string, len(steps))
		for i := range steps {
			out[i] = `CREATE TABLE IF NOT EXISTS ` + component + `_` + string(rune('a'+i)) + ` (id INTEGER)`
		}
		if component == "broken" {
			out[1] = `NOT SQL`
		}
		return out
	}
	// run checks each component twice (a second check reads the table) and
	// returns the errors, the rows and the schema after each round.
	run := func(t *testing.T, path string, plain bool, components []string) []string {
		copyPath := filepath.Join(t.TempDir(), FileName)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(copyPath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := openFile(copyPath, plain)
		if err != nil {
			return []string{"open: " + err.Error()}
		}
		defer s.Close()
		var out []string
		snapshot := func() {
			rows, err := s.DB.Query(`SELECT component, version FROM schema_migrations ORDER BY component, version`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			for rows.Next() {
				var c string
				var v int
				rows.Scan(&c, &v)
				out = append(out, fmt.Sprintf("row %s %d", c, v))
			}
			tables, err := s.DB.Query(`SELECT name FROM sqlite_master ORDER BY name`)
			if err != nil {
				t.Fatal(err)
			}
			defer tables.Close()
			for tables.Next() {
				var name string
				tables.Scan(&name)
				out = append(out, "table "+name)
			}
		}
		for range 2 {
			for _, c := range components {
				err := s.Migrate(ctx, c, stepsOf(c))
				out = append(out, fmt.Sprintf("%s: %v (too new: %t)", c, err, errors.Is(err, ErrSchemaTooNew)))
			}
			snapshot()
		}
		return out
	}
	cases := map[string]map[string][]int{
		"up to date":   {"up": {1, 2, 3}},
		"new database": {},
		"behind":       {"up": {1, 2, 3}, "behind": {1}},
		"gap":          {"up": {1, 2, 3}, "gap": {1, 3}},
		"newer":        {"up": {1, 2, 3}, "newer": {1, 2, 3, 4}},
		"newer, gap":   {"newer": {1, 5}},
		"store newer":  {"store": {1, 2, 3}},
	}
	for name, versions := range cases {
		t.Run(name, func(t *testing.T) {
			path := seed(t, versions)
			components := []string{"up", "fresh", "behind", "gap", "newer", "broken"}
			plain, fast := run(t, path, true, components), run(t, path, false, components)
			if strings.Join(fast, "\n") != strings.Join(plain, "\n") {
				t.Errorf("the one read differs from the plain path:\n--- one read\n%s\n--- plain\n%s", strings.Join(fast, "\n"), strings.Join(plain, "\n"))
			}
		})
	}
}

// TestStartReadsAppliedMigrationsOnce: the components' checks at start are
// answered from one read, each component's once, and a later check of the
// same component reads the table again (the one read is not a cache that
// could go stale).
func TestStartReadsAppliedMigrationsOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	steps := []string{`CREATE TABLE x (id INTEGER)`, `CREATE TABLE y (id INTEGER)`}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx, "c", steps); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.applied.byComponent["c"]; !ok || !s.applied.read {
		t.Fatalf("after Open the one read holds %v, want component c", s.applied.byComponent)
	}
	if err := s.Migrate(ctx, "c", steps); err != nil {
		t.Fatal(err)
	}
	if len(s.applied.byComponent) != 0 {
		t.Errorf("after the checks the one read still holds %v", s.applied.byComponent)
	}
	// Another process upgrades c; this process's next check must see it.
	if _, err := s.DB.Exec(`INSERT INTO schema_migrations (component, version, applied_at) VALUES ('c', 3, 'later')`); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx, "c", steps); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("a check after another process upgraded the schema: %v, want ErrSchemaTooNew", err)
	}

	// A component first checked long after the read takes the table as it
	// is now: here another process upgraded d after this one started.
	dSteps := []string{`CREATE TABLE dx (id INTEGER)`, `CREATE TABLE dy (id INTEGER)`}
	if err := s.Migrate(ctx, "d", dSteps); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if _, err := s.DB.Exec(`INSERT INTO schema_migrations (component, version, applied_at) VALUES ('d', 3, 'later')`); err != nil {
		t.Fatal(err)
	}
	s2.applied.at = s2.applied.at.Add(-2 * appliedFresh)
	if err := s2.Migrate(ctx, "d", dSteps); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("a first check of d long after the start, d upgraded meanwhile: %v, want ErrSchemaTooNew", err)
	}
}
