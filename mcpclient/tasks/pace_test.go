package tasks

import (
	"testing"
	"time"
)

// A young task is polled every QuickPoll whatever the server advises, so
// a decision made elsewhere reaches the caller without waiting out the
// advised interval; after QuickFor the server's advice and the backoff
// hold again.
func TestPaceQuickWhileYoung(t *testing.T) {
	now := time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p := NewPace(5*time.Second, clock)
	if p.wait != QuickPoll {
		t.Fatalf("first wait with an advised 5s = %s, want %s", p.wait, QuickPoll)
	}
	for i := 0; i < 10; i++ {
		p.Polled(5 * time.Second)
		if p.wait != QuickPoll {
			t.Fatalf("poll %d of a young task waits %s, want %s", i, p.wait, QuickPoll)
		}
	}
	now = now.Add(QuickFor)
	p.Polled(5 * time.Second)
	if p.wait < 5*time.Second {
		t.Fatalf("after %s the wait is %s, want the advised 5s or more", QuickFor, p.wait)
	}
	// A server that advises less than QuickPoll is polled as it says.
	now = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	if p := NewPace(200*time.Millisecond, clock); p.wait != 200*time.Millisecond {
		t.Fatalf("advised 200ms, wait %s", p.wait)
	}
}
