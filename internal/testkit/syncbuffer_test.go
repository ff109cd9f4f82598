package testkit

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSyncBufferConcurrentWrites: writers on several goroutines and a
// reader at the same time (the race detector checks the locking) lose no
// write.
func TestSyncBufferConcurrentWrites(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "w%d-%d\n", w, i)
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_ = b.String()
		}
	}()
	wg.Wait()
	<-done
	if n := strings.Count(b.String(), "\n"); n != 400 {
		t.Errorf("%d lines, want 400", n)
	}
}

// TestSyncBufferWaitFor: a wait returns once a later write brings the
// text, with everything written so far.
func TestSyncBufferWaitFor(t *testing.T) {
	var b SyncBuffer
	b.Write([]byte("starting\n"))
	go func() {
		for _, s := range []string{"one\n", "two\n", "ready\n"} {
			time.Sleep(time.Millisecond)
			b.Write([]byte(s))
		}
	}()
	if got := b.WaitFor(t, "ready", time.Minute); got != "starting\none\ntwo\nready\n" {
		t.Errorf("WaitFor returned %q", got)
	}
	// Text already there is found without waiting.
	if got := b.WaitFor(t, "starting", time.Minute); !strings.HasPrefix(got, "starting") {
		t.Errorf("WaitFor returned %q", got)
	}
}

// TestSyncBufferWaitCond: Wait's condition sees the whole text, so a
// caller can wait for more than one substring (here, a count).
func TestSyncBufferWaitCond(t *testing.T) {
	var b SyncBuffer
	go func() {
		for range 3 {
			b.Write([]byte("[y/N] "))
		}
	}()
	text, err := b.Wait(time.Minute, func(s string) bool { return strings.Count(s, "[y/N]") >= 3 })
	if err != nil || strings.Count(text, "[y/N]") != 3 {
		t.Errorf("Wait = %q, %v", text, err)
	}
}

// TestSyncBufferCloseEndsWaits: once closed, a wait for text that did not
// come fails at once rather than at its deadline, and writes are refused.
func TestSyncBufferCloseEndsWaits(t *testing.T) {
	var b SyncBuffer
	b.Write([]byte("partial"))
	errc := make(chan error, 1)
	go func() {
		_, err := b.Wait(time.Hour, func(s string) bool { return strings.Contains(s, "never") })
		errc <- err
	}()
	b.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "ended") {
			t.Errorf("Wait after Close = %v, want an error saying the output ended", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not end the wait")
	}
	if _, err := b.Write([]byte("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if b.String() != "partial" || b.Close() != nil {
		t.Errorf("after Close: %q", b.String())
	}
	// Text that came before Close is still found.
	if _, err := b.Wait(time.Hour, func(s string) bool { return s == "partial" }); err != nil {
		t.Errorf("Wait for written text after Close: %v", err)
	}
}

// TestSyncBufferWaitTimesOut: a wait is bounded, and WaitFor's failure
// shows what was written.
func TestSyncBufferWaitTimesOut(t *testing.T) {
	var b SyncBuffer
	b.Write([]byte("some output"))
	if _, err := b.Wait(10*time.Millisecond, func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "not within 10ms") {
		t.Errorf("Wait = %v, want a timeout", err)
	}
	msg := failure(t, func(tb testing.TB) { b.WaitFor(tb, "absent", 10*time.Millisecond) })
	if !strings.Contains(msg, `"absent"`) || !strings.Contains(msg, "some output") {
		t.Errorf("WaitFor failure %q does not name the text and show the output", msg)
	}
}

func TestNewLogger(t *testing.T) {
	logger, logs := NewLogger()
	logger.Info("server stopped", "server", "ts")
	if got := logs.String(); !strings.Contains(got, `msg="server stopped" server=ts`) {
		t.Errorf("log = %q", got)
	}
}
