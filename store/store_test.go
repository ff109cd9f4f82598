package store

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"runtime"
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
