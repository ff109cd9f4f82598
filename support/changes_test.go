package support_test

import (
	"context"
	"testing"
	"time"
)

// WaitChange returns when another connection (another process, another
// replica) commits a decision, not at its limit.
func TestWaitChangeWakesOnDecision(t *testing.T) {
	dir := t.TempDir()
	waiter, _ := openService(t, dir)
	operator, _ := openService(t, dir) // the same database, opened again
	ctx := context.Background()
	r, err := waiter.RequestRefund(ctx, "alice", "A-1024", "broken")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	started := make(chan struct{})
	go func() {
		defer close(done)
		close(started)
		waiter.WaitChange(ctx, time.Hour)
	}()
	<-started
	// Decide until the waiter has surely begun looking: a commit before
	// its first look would not wake it, so it is repeated.
	deadline := time.After(20 * time.Second)
	for decided := false; ; {
		if !decided {
			if _, err := operator.DecideRefund(ctx, r.RefundID, true, ""); err != nil {
				t.Fatal(err)
			}
			decided = true
		} else if _, err := operator.RequestRefund(ctx, "bob", "A-1024", "again"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			return
		case <-time.After(300 * time.Millisecond):
		case <-deadline:
			t.Fatal("WaitChange did not return on the other connection's commits")
		}
	}
}
