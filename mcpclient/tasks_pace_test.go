package mcpclient

import (
	"testing"
	"time"
)

// A young task is polled every quickPoll whatever the server advises, so
// a decision made elsewhere reaches the caller without waiting out the
// advised interval; after quickFor the server's advice and the backoff
// hold again.
func TestPaceQuickWhileYoung(t *testing.T) {
	now := time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	paceNow = func() time.Time { return now }
	t.Cleanup(func() { paceNow = time.Now })
	r := &taskRun{}
	p := newPace(5 * time.Second)
	if p.wait != quickPoll {
		t.Fatalf("first wait with an advised 5s = %s, want %s", p.wait, quickPoll)
	}
	for i := 0; i < 10; i++ {
		r.polled(p, 5*time.Second)
		if p.wait != quickPoll {
			t.Fatalf("poll %d of a young task waits %s, want %s", i, p.wait, quickPoll)
		}
	}
	now = now.Add(quickFor)
	r.polled(p, 5*time.Second)
	if p.wait < 5*time.Second {
		t.Fatalf("after %s the wait is %s, want the advised 5s or more", quickFor, p.wait)
	}
	// A server that advises less than quickPoll is polled as it says.
	now = time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	if p := newPace(200 * time.Millisecond); p.wait != 200*time.Millisecond {
		t.Fatalf("advised 200ms, wait %s", p.wait)
	}
}
