package mcpserver

import (
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestWarmWorkersReturnResultsAndPanics(t *testing.T) {
	w := newWarmWorkers(2)
	var wg sync.WaitGroup
	results := make([]int, 40)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(func() { results[i] = i * i })
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r != i*i {
			t.Fatalf("results[%d] = %d", i, r)
		}
	}

	got := func() (p any) {
		defer func() { p = recover() }()
		w.run(func() { panic("boom") })
		return nil
	}()
	if got != "boom" {
		t.Fatalf("the caller recovered %v, want the worker's panic", got)
	}
	// The worker that panicked still serves calls.
	ran := false
	w.run(func() { ran = true })
	if !ran {
		t.Fatal("run after a panic did not run its function")
	}
}

// TestWarmWorkersNeverQueue: with every worker busy, a call runs on the
// caller's goroutine instead of waiting. The only worker runs a call that
// makes a second one and waits for it: a pool that queued the second call
// would deadlock, which the test reports after neverQueueBound instead of
// hanging.
func TestWarmWorkersNeverQueue(t *testing.T) {
	const neverQueueBound = 10 * time.Second
	w := newWarmWorkers(1)
	done := make(chan bool, 1)
	go func() {
		ran := false
		w.run(func() {
			w.run(func() { ran = true })
		})
		done <- ran
	}()
	select {
	case ran := <-done:
		if !ran {
			t.Fatal("with its only worker busy, run returned without running the second call")
		}
	case <-time.After(neverQueueBound):
		t.Fatalf("with its only worker busy, the second call did not run within %v: the pool queued it behind the worker that waits for it", neverQueueBound)
	}
}

// TestWarmWorkersEndWhenIdle: a worker stays for warmIdleTimeout after its
// last call, work that reaches it restarts that wait, and then it ends, so
// an idle server keeps no goroutines. On synctest's clock the bounds are
// exact.
func TestWarmWorkersEndWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWarmWorkers(2)
		call := func() {
			ran := make(chan struct{})
			w.start(func() { close(ran) })
			<-ran
			synctest.Wait()
		}
		running := func(want int32, when string) {
			t.Helper()
			if n := w.running.Load(); n != want {
				t.Fatalf("%s: %d workers running, want %d", when, n, want)
			}
		}
		call()
		running(1, "after a call")
		time.Sleep(warmIdleTimeout - time.Nanosecond)
		synctest.Wait()
		running(1, "just before the idle timeout")
		call() // taken by the idle worker, which starts its wait again
		running(1, "after a second call")
		time.Sleep(warmIdleTimeout - time.Nanosecond)
		synctest.Wait()
		running(1, "just before the idle timeout counted from the second call")
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		running(0, "at the idle timeout")
	})
}
