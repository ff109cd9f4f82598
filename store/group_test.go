package store

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func openGroupStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background(), "grouptest", []string{
		`CREATE TABLE g (seq INTEGER PRIMARY KEY, who TEXT NOT NULL UNIQUE)`,
	}); err != nil {
		s.Close()
		t.Fatal(err)
	}
	return s
}

// appendRow is a transaction of the kind GroupTx is for: it reads the
// last sequence number and writes the next.
func appendRow(who string) func(*sql.Tx) error {
	return func(tx *sql.Tx) error {
		var next int
		if err := tx.QueryRow(`SELECT COALESCE(MAX(seq), 0) + 1 FROM g`).Scan(&next); err != nil {
			return err
		}
		_, err := tx.Exec(`INSERT INTO g (seq, who) VALUES (?, ?)`, next, who)
		return err
	}
}

func rowsOf(t *testing.T, s *Store) []string {
	t.Helper()
	rows, err := s.DB.Query(`SELECT who FROM g ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var w string
		if err := rows.Scan(&w); err != nil {
			t.Fatal(err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// holdGroup starts a GroupTx whose transaction waits for release, so that
// the GroupTx calls made meanwhile queue up and commit as one batch; it
// returns once the queue holds want of them.
func holdGroup(t *testing.T, s *Store) (queued func(want int), release func() error) {
	t.Helper()
	started, gate := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- s.GroupTx(context.Background(), func(tx *sql.Tx) error {
			close(started)
			<-gate
			return appendRow("holder")(tx)
		})
	}()
	<-started
	queued = func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			s.group.mu.Lock()
			n := len(s.group.queue)
			s.group.mu.Unlock()
			if n >= want {
				return
			}
			if time.Now().After(deadline) {
				close(gate)
				t.Fatalf("only %d of %d transactions queued within 10 s", n, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return queued, func() error { close(gate); return <-errc }
}

func TestGroupTxBatchesInOrderAndIsolatesFailures(t *testing.T) {
	s := openGroupStore(t, t.TempDir())
	defer s.Close()
	queued, release := holdGroup(t, s)

	boom := errors.New("boom")
	type outcome struct {
		err      error
		panicked any
	}
	results := make([]outcome, 6)
	var wg sync.WaitGroup
	for i := range 6 {
		fn := appendRow(fmt.Sprint("w", i))
		switch i {
		case 2: // writes, then fails: its row must not stay
			fn = func(tx *sql.Tx) error {
				if err := appendRow("w2")(tx); err != nil {
					return err
				}
				return boom
			}
		case 4: // writes, then panics
			fn = func(tx *sql.Tx) error {
				if err := appendRow("w4")(tx); err != nil {
					return err
				}
				panic("tx panicked")
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { results[i].panicked = recover() }()
			results[i].err = s.GroupTx(context.Background(), fn)
		}()
		queued(i + 1) // one at a time, so the queue's order is known
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	for i, r := range results {
		switch i {
		case 2:
			if !errors.Is(r.err, boom) || r.panicked != nil {
				t.Errorf("transaction 2: %v, panic %v; want its own error", r.err, r.panicked)
			}
		case 4:
			if r.panicked != "tx panicked" {
				t.Errorf("transaction 4: %v, panic %v; want its panic in its caller", r.err, r.panicked)
			}
		default:
			if r.err != nil || r.panicked != nil {
				t.Errorf("transaction %d: %v, panic %v; want it committed", i, r.err, r.panicked)
			}
		}
	}
	if got, want := rowsOf(t, s), []string{"holder", "w0", "w1", "w3", "w5"}; !slices.Equal(got, want) {
		t.Errorf("rows %v, want %v (in order, without the failed ones)", got, want)
	}
	if s.group.batches != 2 {
		t.Errorf("%d batches, want 2: the holder's and the six that waited for it", s.group.batches)
	}
}

func TestGroupTxSkipsCancelled(t *testing.T) {
	s := openGroupStore(t, t.TempDir())
	defer s.Close()
	queued, release := holdGroup(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	ran := false
	errc := make(chan error, 1)
	go func() {
		errc <- s.GroupTx(ctx, func(tx *sql.Tx) error { ran = true; return appendRow("late")(tx) })
	}()
	queued(1)
	cancel()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) || ran {
		t.Errorf("a transaction cancelled while it waited: err %v, ran %v; want context.Canceled and not run", err, ran)
	}
	if err := s.GroupTx(ctx, appendRow("after")); !errors.Is(err, context.Canceled) {
		t.Errorf("GroupTx with a cancelled context: %v, want context.Canceled", err)
	}
	if got := rowsOf(t, s); !slices.Equal(got, []string{"holder"}) {
		t.Errorf("rows %v, want only the holder's", got)
	}
}

// TestGroupTxSameAsTx runs the same transactions, from many goroutines,
// through Tx and through GroupTx: each set of rows must hold every
// committed transaction once, with sequence numbers 1..n without a gap,
// and the refused ones in neither.
func TestGroupTxSameAsTx(t *testing.T) {
	run := func(tx func(context.Context, func(*sql.Tx) error) error, s *Store) (ok, refused []string) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 120 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				who := fmt.Sprintf("w%03d", i)
				if i%10 == 7 {
					who = "w000" // a duplicate: the UNIQUE constraint refuses it
				}
				err := tx(context.Background(), appendRow(who))
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					ok = append(ok, who)
				} else {
					refused = append(refused, who)
				}
			}()
		}
		wg.Wait()
		slices.Sort(ok)
		slices.Sort(refused)
		return ok, refused
	}
	plain := openGroupStore(t, t.TempDir())
	defer plain.Close()
	grouped := openGroupStore(t, t.TempDir())
	defer grouped.Close()
	okPlain, refPlain := run(plain.Tx, plain)
	okGroup, refGroup := run(grouped.GroupTx, grouped)
	// Which of the duplicates wins the race differs; the counts do not.
	if len(okPlain) != len(okGroup) || len(refPlain) != len(refGroup) || len(refGroup) != 12 {
		t.Fatalf("Tx committed %d and refused %d; GroupTx committed %d and refused %d (want 12 refused)", len(okPlain), len(refPlain), len(okGroup), len(refGroup))
	}
	for name, s := range map[string]*Store{"Tx": plain, "GroupTx": grouped} {
		got := rowsOf(t, s)
		slices.Sort(got)
		want := okPlain
		if s == grouped {
			want = okGroup
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: rows %v, want the committed %v", name, got, want)
		}
		var n, maxSeq int
		if err := s.DB.QueryRow(`SELECT COUNT(*), MAX(seq) FROM g`).Scan(&n, &maxSeq); err != nil {
			t.Fatal(err)
		}
		if n != maxSeq {
			t.Errorf("%s: %d rows with sequence numbers up to %d: a gap or a lost write", name, n, maxSeq)
		}
	}
}

// envCrashChild makes the test binary the writer TestGroupTxSurvivesKill
// kills.
const envCrashChild = "AGENTAPP_STORE_GROUP_CRASH_DIR"

// TestGroupTxCrashChild is the writer of TestGroupTxSurvivesKill: from 8
// goroutines it stores rows with GroupTx and prints "ack NAME" for each
// once GroupTx returned, until it is killed.
func TestGroupTxCrashChild(t *testing.T) {
	dir := os.Getenv(envCrashChild)
	if dir == "" {
		t.Skip("run by TestGroupTxSurvivesKill")
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				who := fmt.Sprintf("%d-%d", w, i)
				if err := s.GroupTx(context.Background(), appendRow(who)); err != nil {
					fmt.Fprintln(os.Stderr, "child:", err)
					return
				}
				out.Lock()
				fmt.Printf("ack %s\n", who)
				out.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestGroupTxSurvivesKill kills a process that writes with GroupTx (kill
// -9, no chance to flush anything) and checks that every write it
// acknowledged is in the database.
func TestGroupTxSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a writer process")
	}
	dir := t.TempDir()
	s := openGroupStore(t, dir)
	s.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGroupTxCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashChild+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	sc := bufio.NewScanner(stdout)
	for len(acked) < 300 && sc.Scan() {
		if who, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked = append(acked, who)
		}
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	// Acks printed before the kill landed count too.
	for sc.Scan() {
		if who, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked = append(acked, who)
		}
	}
	_ = cmd.Wait()
	if len(acked) < 300 {
		t.Fatalf("the writer acknowledged %d writes before it ended, want 300; its stderr: %s", len(acked), stderr.String())
	}

	s = openGroupStore(t, dir)
	defer s.Close()
	stored := map[string]bool{}
	for _, w := range rowsOf(t, s) {
		stored[w] = true
	}
	var lost []string
	for _, w := range acked {
		if !stored[w] {
			lost = append(lost, w)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged writes are not stored after kill -9: %v", len(lost), len(acked), lost[:min(len(lost), 10)])
	}
	var n int
	if err := s.DB.QueryRow(`SELECT COUNT(*) FROM g`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acknowledged, %d stored", len(acked), n)
}
