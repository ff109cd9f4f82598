package web

import (
	"context"
	"sync"
	"time"
)

// Messages that arrive together are answered in two passes: every one of
// them gets its first event, then their turns run. Go's scheduler reads the
// network only when a processor runs out of work or every 10 ms (sysmon),
// so while the turns of the first messages of a burst were runnable, the
// rest of the burst sat unread in the kernel and then in the run queue
// behind those turns; at 200 messages at once the last first events waited
// for most of the turns' CPU time (bench/NOTES.md). A turn parked here is
// not runnable, so an idle processor polls the network and the next message
// is read as soon as it comes.
const (
	// burstQuiet is the pause in arrivals that ends a burst. A sender
	// of many messages at once is itself descheduled now and then
	// between two of them: at 1 ms such pauses ended bursts early, and
	// the turns released then slowed the rest of the burst (p99 of the
	// first event 46 ms at 1 ms, 36 ms at 3 ms, no better at 5 ms;
	// bench/NOTES.md).
	burstQuiet = 3 * time.Millisecond
	// burstMax bounds the wait of a turn: under a steady stream of
	// messages, with no pause, a turn still starts within burstMax.
	burstMax = 20 * time.Millisecond
)

// burst holds the turns of messages that come in a burst until the
// arrivals pause (quiet) or the oldest of them has waited max. A message
// with no other within quiet before it does not wait: one person's
// message costs nothing. The waiting turns are released together (a
// channel close readies its receivers in the order they began to wait).
type burst struct {
	quiet, max time.Duration

	mu      sync.Mutex
	last    time.Time     // the latest arrival
	first   time.Time     // the arrival of the oldest waiting turn
	release chan struct{} // closed to release the waiting turns; nil when none wait
	timer   *time.Timer
	waiting int // turns in wait (inWait)
}

func newBurst(quiet, max time.Duration) *burst { return &burst{quiet: quiet, max: max} }

// wait returns when the turn of a message that arrived now may run, or
// when ctx is done (the caller's turn then fails on ctx as it would have).
func (b *burst) wait(ctx context.Context) {
	b.mu.Lock()
	now := time.Now()
	prev := b.last
	b.last = now
	if b.release == nil && (prev.IsZero() || now.Sub(prev) >= b.quiet) {
		b.mu.Unlock()
		return
	}
	if b.release == nil {
		b.release, b.first = make(chan struct{}), now
		if b.timer == nil {
			b.timer = time.AfterFunc(b.quiet, b.fire)
		} else {
			b.timer.Reset(b.quiet)
		}
	}
	ch := b.release
	b.waiting++
	b.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.waiting--
	b.mu.Unlock()
}

// fire releases the waiting turns once the arrivals have paused for quiet
// or the oldest has waited max; otherwise it sets the timer again.
func (b *burst) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.release == nil {
		return
	}
	due := b.last.Add(b.quiet)
	if limit := b.first.Add(b.max); limit.Before(due) {
		due = limit
	}
	if d := time.Until(due); d > 0 {
		b.timer.Reset(d)
		return
	}
	close(b.release)
	b.release = nil
}

// flush releases the waiting turns now (at shutdown).
func (b *burst) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.release != nil {
		close(b.release)
		b.release = nil
		b.timer.Stop()
	}
}

// inWait is the number of turns waiting, for tests.
func (b *burst) inWait() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}
