package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/resultstore"
	"github.com/agentapp/agentapp/store/storetest"
)

func TestStore(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	db := storetest.New(t)
	st := db.Open()
	s, err := New(ctx, st, &Options{MaxSessionBytes: 1000, MaxSessionResults: 3, MaxAge: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	// NUL bytes and invalid UTF-8 come back byte for byte.
	hostile := "a\x00b\xff\xfe中文\x1b[0m"
	id, err := s.Put(ctx, resultstore.Result{Session: "s1", Server: "srv", Tool: "t", Text: hostile})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Get(ctx, "s1", id)
	if err != nil || r.Text != hostile || r.Server != "srv" || r.Tool != "t" || !r.Created.Equal(now) {
		t.Fatalf("Get = %+v, %v", r, err)
	}
	if _, err := s.Get(ctx, "s2", id); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("another session read the result: %v", err)
	}
	if _, err := s.Put(ctx, resultstore.Result{Session: "s1", Text: strings.Repeat("x", 1001)}); !errors.Is(err, resultstore.ErrTooLarge) {
		t.Errorf("oversize: %v", err)
	}
	// Count cap: three more push the first out.
	var ids []string
	for range 3 {
		now = now.Add(time.Second)
		id, err := s.Put(ctx, resultstore.Result{Session: "s1", Text: "y"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := s.Get(ctx, "s1", id); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("the oldest of 4 with a cap of 3 is still there: %v", err)
	}
	// Byte cap.
	now = now.Add(time.Second)
	big, err := s.Put(ctx, resultstore.Result{Session: "s1", Text: strings.Repeat("z", 999)})
	if err != nil {
		t.Fatal(err)
	}
	// 999 + 1 bytes fit the cap of 1000; the two older ones do not.
	for _, old := range ids[:2] {
		if _, err := s.Get(ctx, "s1", old); !errors.Is(err, resultstore.ErrNotFound) {
			t.Errorf("a result over the byte cap is still there: %v", err)
		}
	}
	if _, err := s.Get(ctx, "s1", ids[2]); err != nil {
		t.Errorf("the newest result within the byte cap was dropped: %v", err)
	}
	// The store survives a reopen (another Store on the same database).
	st2 := db.Open()
	s2, err := New(ctx, st2, &Options{MaxAge: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s2.Get(ctx, "s1", big); err != nil || len(r.Text) != 999 {
		t.Errorf("after reopening: %v", err)
	}
	// Age.
	now = now.Add(2 * time.Hour)
	if _, err := s.Get(ctx, "s1", big); !errors.Is(err, resultstore.ErrNotFound) {
		t.Errorf("an expired result is served: %v", err)
	}
	if err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM tool_results`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after Prune %d rows (%v)", n, err)
	}
	id, _ = s.Put(ctx, resultstore.Result{Session: "s3", Text: "q"})
	if err := s.DropSession(ctx, "s3"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "s3", id); !errors.Is(err, resultstore.ErrNotFound) {
		t.Error("DropSession")
	}
}

// TestReadToolOnSQL pages a cut result stored in the database.
func TestReadToolOnSQL(t *testing.T) {
	ctx := context.Background()
	s, err := New(ctx, storetest.Open(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &resultstore.Cutter{Store: s, Limits: resultstore.Limits{Default: 300}}
	text := strings.Repeat("第一行 line one\n", 500)
	cut := c.Apply(ctx, "s", "srv", "t", text)
	if !cut.Cut || cut.ID == "" {
		t.Fatalf("not cut or not stored: %+v", cut.StoreErr)
	}
	r, err := s.Get(ctx, "s", cut.ID)
	if err != nil || r.Text != text {
		t.Errorf("stored whole differs: %v", err)
	}
}

// TestHasResults: a session with a stored result within MaxAge has
// results; another session, or the same one past MaxAge, has none.
func TestHasResults(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(ctx, storetest.New(t).Open(), &Options{MaxAge: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, resultstore.Result{Session: "s1", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		session string
		later   time.Duration
		want    bool
	}{{"s1", 0, true}, {"s2", 0, false}, {"s1", 2 * time.Hour, false}} {
		now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Add(c.later)
		if got, err := s.HasResults(ctx, c.session); err != nil || got != c.want {
			t.Errorf("HasResults(%s) %v later = %v, %v; want %v", c.session, c.later, got, err, c.want)
		}
	}
}

// TestPruneTotal: Prune drops the oldest results, of any session, while
// all of them together are over MaxTotalBytes.
func TestPruneTotal(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	s, err := New(ctx, storetest.New(t).Open(), &Options{MaxTotalBytes: 250, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 4 {
		now = now.Add(time.Second)
		id, err := s.Put(ctx, resultstore.Result{Session: fmt.Sprintf("s%d", i), Text: strings.Repeat("x", 100)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.Prune(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		_, err := s.Get(ctx, fmt.Sprintf("s%d", i), id)
		if gone := errors.Is(err, resultstore.ErrNotFound); gone != (i < 2) {
			t.Errorf("result %d: gone %v (%v); want the two oldest gone to fit 400 bytes into 250", i, gone, err)
		}
	}
}
