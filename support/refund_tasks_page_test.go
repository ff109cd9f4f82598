package support_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentapp/agentapp/support"
)

// TestRefundTasksPages (issue 43, item 4): a caller with more tasks than
// one page lists them all, newest first, by following the cursors; tasks
// with the same creation time are neither skipped nor repeated; a forged
// cursor is ErrBadCursor.
func TestRefundTasksPages(t *testing.T) {
	clock := newFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := openService(t, t.TempDir(), support.WithClock(clock.Now))
	ctx := context.Background()
	const n = support.MaxTaskList + 50
	for i := range n {
		if i%2 == 0 {
			clock.Advance(time.Millisecond) // pairs share a creation time
		}
		args := mustJSON(t, map[string]string{"orderId": "A-1024", "reason": fmt.Sprintf("reason %d", i)})
		if _, err := svc.StartRefundTask(ctx, "alice", args, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.StartRefundTask(ctx, "bob", mustJSON(t, map[string]string{"orderId": "A-1024", "reason": "x"}), time.Hour); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var last time.Time
	cursor, pages := "", 0
	for {
		ts, next, err := svc.RefundTasksPage(ctx, "alice", cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(ts) > support.MaxTaskList {
			t.Fatalf("a page of %d tasks", len(ts))
		}
		for _, tk := range ts {
			if seen[tk.ID] {
				t.Fatalf("task %s listed twice", tk.ID)
			}
			if !last.IsZero() && tk.Created.After(last) {
				t.Fatalf("task %s (%v) after one created at %v: not newest first", tk.ID, tk.Created, last)
			}
			seen[tk.ID], last = true, tk.Created
		}
		if cursor = next; cursor == "" || pages > 5 {
			break
		}
	}
	if len(seen) != n || pages != 2 {
		t.Errorf("listed %d tasks in %d pages; want %d in 2", len(seen), pages, n)
	}
	if _, _, err := svc.RefundTasksPage(ctx, "alice", "t1:bm90IGEgY3Vyc29y"); !errors.Is(err, support.ErrBadCursor) {
		t.Errorf("a forged cursor: %v; want ErrBadCursor", err)
	}
}
