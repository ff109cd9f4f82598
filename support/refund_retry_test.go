package support_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/support"
)

func countRefunds(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM support_refunds`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A refund task whose task row cannot be written stores nothing, so the
// caller told "failed" finds no pending request behind its back, and the
// retry files exactly one. On PostgreSQL the fault is a lock held on the
// task table (the statement gives up after lock_timeout); on SQLite, which
// has no table locks, a trigger fails the task's insert.
func TestRefundTaskWrittenInOneTransaction(t *testing.T) {
	ctx := context.Background()
	var (
		svc     *support.Service
		st      *store.Store
		release func()
	)
	if storetest.Backend() == store.Postgres {
		db := storetest.NewPostgres(t)
		var err error
		st, err = store.OpenURL(ctx, db.URL+"&lock_timeout=300", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if svc, err = support.New(ctx, st); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		locker, err := st.DB.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := locker.ExecContext(ctx, `LOCK TABLE support_tasks IN EXCLUSIVE MODE`); err != nil {
			t.Fatal(err)
		}
		release = func() { locker.Rollback() }
	} else {
		svc, st = openService(t, t.TempDir())
		if _, err := st.DB.ExecContext(ctx, `CREATE TRIGGER fail_task BEFORE INSERT ON support_tasks
			BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
			t.Fatal(err)
		}
		release = func() {
			if _, err := st.DB.ExecContext(ctx, `DROP TRIGGER fail_task`); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := mustJSON(t, map[string]string{"orderId": "A-1024", "reason": "arrived broken"})
	if _, err := svc.StartRefundTask(ctx, "alice", args, time.Hour); err == nil {
		t.Fatal("the task could not be written, yet StartRefundTask succeeded")
	}
	if n := countRefunds(t, st.DB); n != 0 {
		t.Errorf("after a failed StartRefundTask %d refund request(s) are stored; want 0", n)
	}
	release()
	task, err := svc.StartRefundTask(ctx, "alice", args, time.Hour)
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	again, err := svc.StartRefundTask(ctx, "alice", args, time.Hour)
	if err != nil || again.ID != task.ID {
		t.Fatalf("a second retry: %+v, %v; want the task %s", again, err, task.ID)
	}
	if n := countRefunds(t, st.DB); n != 1 {
		t.Errorf("after the retries %d refund requests are stored; want 1", n)
	}
}

// requestRefund is idempotent for a retry as createTicket is: the same
// caller, order and reason within the window return the first request;
// another caller, another reason, a withdrawn request or a later call
// files a new one.
func TestRequestRefundRetryReturnsFirst(t *testing.T) {
	clock := newFakeClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	svc, st := openService(t, t.TempDir(), support.WithClock(clock.Now))
	ctx := context.Background()
	file := func(caller, reason string) *support.Refund {
		t.Helper()
		r, err := svc.RequestRefund(ctx, caller, "A-1024", reason)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := file("alice", "arrived broken")
	clock.Advance(time.Minute)
	if r := file("alice", " arrived broken "); r.RefundID != first.RefundID {
		t.Errorf("a retry filed %s; want the first request %s", r.RefundID, first.RefundID)
	}
	if r := file("bob", "arrived broken"); r.RefundID == first.RefundID {
		t.Error("another caller got alice's request back")
	}
	if r := file("alice", "wrong size"); r.RefundID == first.RefundID {
		t.Error("another reason got the first request back")
	}
	task, err := svc.StartRefundTask(ctx, "alice", mustJSON(t, map[string]string{"orderId": "A-1024", "reason": "arrived broken"}), time.Hour)
	if err != nil || task.ID != first.RefundID {
		t.Fatalf("the same request as a task: %+v, %v; want %s", task, err, first.RefundID)
	}
	if _, err := svc.CancelRefundTask(ctx, "alice", task.ID); err != nil {
		t.Fatal(err)
	}
	withdrawn := first.RefundID
	first = file("alice", "arrived broken")
	if first.RefundID == withdrawn {
		t.Error("a withdrawn request came back for a new call")
	}
	clock.Advance(support.IdempotencyWindow + time.Second)
	if r := file("alice", "arrived broken"); r.RefundID == first.RefundID {
		t.Error("a call after the window got the old request back")
	}
	if n := countRefunds(t, st.DB); n != 5 {
		t.Errorf("%d requests stored; want 5", n)
	}
}
