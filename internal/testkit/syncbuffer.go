package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer that is safe for concurrent use. Tests hand
// it to a process (as its stdout or stderr), a goroutine or a logger as an
// io.Writer, and read it with String, or wait for text with WaitFor or Wait,
// while the writer still writes. A plain bytes.Buffer there is a data race.
//
// The zero value is an empty buffer ready to use. A SyncBuffer must not be
// copied after first use.
type SyncBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	closed  bool
	changed chan struct{} // closed, and forgotten, by the next Write or Close
}

// ErrClosed is returned by Write after Close.
var ErrClosed = errors.New("testkit: write to a closed SyncBuffer")

// Write appends p to the buffer and wakes the waiters.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, ErrClosed
	}
	n, err := b.b.Write(p)
	b.wakeLocked()
	return n, err
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Close says that no more text is coming (the process's output ended), so
// that a wait for text that has not come fails at once instead of at its
// deadline. The text written stays readable. Close is idempotent and
// always returns nil.
func (b *SyncBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.wakeLocked()
	return nil
}

func (b *SyncBuffer) wakeLocked() {
	if b.changed != nil {
		close(b.changed)
		b.changed = nil
	}
}

// Wait waits until cond, given everything written so far, reports true,
// and returns that text. It calls cond again after each write, without
// polling. It gives up with an error when the buffer is closed or timeout
// has passed with cond still false, and then returns the text it last saw,
// for the caller's failure message. The timeout only keeps a broken test
// from hanging; it asserts nothing about speed, so make it generous.
//
// cond runs on the caller's goroutine, without the buffer's lock held.
func (b *SyncBuffer) Wait(timeout time.Duration, cond func(text string) bool) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		b.mu.Lock()
		text, closed := b.b.String(), b.closed
		if b.changed == nil {
			b.changed = make(chan struct{})
		}
		changed := b.changed
		b.mu.Unlock()
		if cond(text) {
			return text, nil
		}
		if closed {
			return text, errors.New("the output ended first")
		}
		select {
		case <-changed:
		case <-timer.C:
			// One last look: a write may have raced the timer.
			text := b.String()
			if cond(text) {
				return text, nil
			}
			return text, fmt.Errorf("not within %v", timeout)
		}
	}
}

// WaitFor waits until the buffer holds substr and returns everything
// written so far; it fails the test, showing the text, when the buffer is
// closed or timeout passes first (see Wait).
func (b *SyncBuffer) WaitFor(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	text, err := b.Wait(timeout, func(text string) bool { return strings.Contains(text, substr) })
	if err != nil {
		t.Fatalf("waiting for %q: %v; the text so far:\n%s", substr, err, text)
	}
	return text
}
