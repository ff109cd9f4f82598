package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// watchWriterEnv turns the test binary into the writing child process of
// TestWatchedCacheMatchesPlainReads.
const watchWriterEnv = "STORE_TEST_WATCH_WRITER_DB"

// TestHelperWatchWriter is not a test of its own: run as a child process by
// TestWatchedCacheMatchesPlainReads, it opens the database named by
// watchWriterEnv and runs commands read from stdin, one per line, answering
// OK after each has committed: "set KEY VALUE" updates a row, "checkpoint"
// checkpoints the WAL and truncates it (so the next commit restarts it).
func TestHelperWatchWriter(t *testing.T) {
	path := os.Getenv(watchWriterEnv)
	if path == "" {
		return
	}
	s, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "set":
			_, err = s.DB.Exec(`UPDATE kv SET v = ? WHERE k = ?`, f[2], f[1])
		case len(f) == 1 && f[0] == "checkpoint":
			_, err = s.DB.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
		default:
			err = fmt.Errorf("unknown command %q", sc.Text())
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("OK")
	}
}

// watchedCache is the cache a Watch is for: entries stamped with the
// Version taken before they were read.
type watchedCache struct {
	w       *Watch
	db      *sql.DB
	entries map[string]watchedEntry
	hits    int
}

type watchedEntry struct {
	v     Version
	value string
}

func (c *watchedCache) get(t *testing.T, k string) string {
	t.Helper()
	v, err := c.w.Version()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := c.entries[k]; ok && e.v == v {
		c.hits++
		return e.value
	}
	value := plainRead(t, c.db, k)
	c.entries[k] = watchedEntry{v: v, value: value}
	return value
}

func plainRead(t *testing.T, db *sql.DB, k string) string {
	t.Helper()
	var v string
	if err := db.QueryRow(`SELECT v FROM kv WHERE k = ?`, k).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestWatchedCacheMatchesPlainReads interleaves commits from every kind of
// other writer (a connection of the same pool, another pool in the same
// process, another process, and WAL checkpoints that restart the log) with
// reads through a cache validated by a Watch, and requires every cached
// read to equal a plain query, on both of the Watch's paths.
func TestWatchedCacheMatchesPlainReads(t *testing.T) {
	for _, mapIndex := range []bool{true, false} {
		t.Run(fmt.Sprintf("mapIndex=%v", mapIndex), func(t *testing.T) {
			testWatchedCache(t, mapIndex)
		})
	}
}

func testWatchedCache(t *testing.T, mapIndex bool) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys := []string{"a", "b", "c"}
	if _, err := s.DB.Exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if _, err := s.DB.Exec(`INSERT INTO kv VALUES (?, '0')`, k); err != nil {
			t.Fatal(err)
		}
	}
	w, err := openWatch(ctx, s.DB.Driver(), s.Path, mapIndex)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if mapIndex && runtime.GOOS == "linux" && w.hdr == nil {
		t.Fatal("the WAL index was not mapped on Linux")
	}
	other, err := OpenFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	child := exec.Command(os.Args[0], "-test.run=^TestHelperWatchWriter$", "-test.count=1")
	child.Env = append(os.Environ(), watchWriterEnv+"="+s.Path)
	var stderr strings.Builder
	child.Stderr = &stderr
	childIn, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	childOutPipe, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	childOut := bufio.NewReader(childOutPipe)
	defer func() {
		childIn.Close()
		io.Copy(io.Discard, childOut)
		if err := child.Wait(); err != nil {
			t.Errorf("writer process: %v\n%s", err, stderr.String())
		}
	}()
	inChild := func(cmd string) {
		t.Helper()
		if _, err := fmt.Fprintln(childIn, cmd); err != nil {
			t.Fatal(err)
		}
		line, err := childOut.ReadString('\n')
		if err != nil || line != "OK\n" {
			t.Fatalf("writer process answered %q, %v to %q\n%s", line, err, cmd, stderr.String())
		}
	}

	c := &watchedCache{w: w, db: s.DB, entries: map[string]watchedEntry{}}
	const rounds = 60
	for i := range rounds {
		k, value := keys[i%len(keys)], fmt.Sprint(i+1)
		switch i % 6 {
		case 0: // the pool the reads use
			_, err = s.DB.Exec(`UPDATE kv SET v = ? WHERE k = ?`, value, k)
		case 1: // another pool in this process
			_, err = other.DB.Exec(`UPDATE kv SET v = ? WHERE k = ?`, value, k)
		case 2:
			inChild("set " + k + " " + value)
		case 3: // the log restarts with the next commit
			inChild("checkpoint")
			inChild("set " + k + " " + value)
		case 4: // nothing changes: the cache must answer from its entries
		case 5: // a transaction that commits nothing
			_, err = other.DB.Exec(`UPDATE kv SET v = v WHERE k = 'none'`)
		}
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			for _, k := range keys {
				if got, want := c.get(t, k), plainRead(t, s.DB, k); got != want {
					t.Fatalf("round %d: the cache read %s = %q, the database has %q", i, k, got, want)
				}
			}
		}
	}
	// Every second read in a round repeats the first with nothing written
	// in between; those must come from the cache, or it is not one.
	if min := rounds * len(keys); c.hits < min {
		t.Errorf("%d cache hits in %d reads, want at least %d", c.hits, 2*rounds*len(keys), min)
	}
}

// TestWatchVersion checks Version's two promises directly: equal while
// nothing commits, different after another process's commit.
func TestWatchVersion(t *testing.T) {
	for _, mapIndex := range []bool{true, false} {
		t.Run(fmt.Sprintf("mapIndex=%v", mapIndex), func(t *testing.T) {
			s, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.DB.Exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			w, err := openWatch(context.Background(), s.DB.Driver(), s.Path, mapIndex)
			if err != nil {
				t.Fatal(err)
			}
			v1, err1 := w.Version()
			v2, err2 := w.Version()
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			if v1 != v2 {
				t.Error("the Version changed with nothing committed")
			}
			if _, err := s.DB.Exec(`INSERT INTO kv VALUES ('a', '1')`); err != nil {
				t.Fatal(err)
			}
			if v3, err := w.Version(); err != nil || v3 == v2 {
				t.Errorf("the Version did not change after a commit (err %v)", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Version(); err == nil {
				t.Error("Version after Close returned no error")
			}
		})
	}
}

// TestWatchNeedsSQLite: a PostgreSQL store has no data version to watch.
func TestWatchNeedsSQLite(t *testing.T) {
	s := &Store{dialect: Postgres}
	if _, err := s.Watch(context.Background()); err == nil {
		t.Fatal("Watch on PostgreSQL returned no error")
	}
}

func BenchmarkWatchVersion(b *testing.B) {
	for _, mapIndex := range []bool{true, false} {
		b.Run(fmt.Sprintf("mapIndex=%v", mapIndex), func(b *testing.B) {
			s, err := Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			w, err := openWatch(context.Background(), s.DB.Driver(), s.Path, mapIndex)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Version(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPointQuery is what a Watch check replaces on a cache hit: a
// prepared one-row primary-key read through the pool.
func BenchmarkPointQuery(b *testing.B) {
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.DB.Exec(`CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	if _, err := s.DB.Exec(`INSERT INTO kv VALUES ('a', '1')`); err != nil {
		b.Fatal(err)
	}
	stmt, err := s.DB.Prepare(`SELECT v FROM kv WHERE k = ?`)
	if err != nil {
		b.Fatal(err)
	}
	defer stmt.Close()
	b.ReportAllocs()
	for b.Loop() {
		var v string
		if err := stmt.QueryRow("a").Scan(&v); err != nil {
			b.Fatal(err)
		}
	}
}

// The Store's Close closes the Watches still open on it, and a Watch
// closed on its own is forgotten by its Store.
func TestStoreCloseClosesWatches(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	open, closed := mustWatch(t, s), mustWatch(t, s)
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	s.watchMu.Lock()
	n := len(s.watches)
	s.watchMu.Unlock()
	if n != 1 {
		t.Fatalf("the store lists %d open watches, want 1", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := open.Version(); err == nil {
		t.Error("a Watch left open still answers after its Store was closed")
	}
	if err := open.Close(); err != nil {
		t.Errorf("closing a Watch twice: %v", err)
	}
}

func mustWatch(t *testing.T, s *Store) *Watch {
	t.Helper()
	w, err := s.Watch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return w
}
