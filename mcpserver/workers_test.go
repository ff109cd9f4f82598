package mcpserver

import (
	"sync"
	"testing"
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
// caller's goroutine instead of waiting; a pool that queued would
// deadlock here, since the busy worker waits for the second call.
func TestWarmWorkersNeverQueue(t *testing.T) {
	w := newWarmWorkers(1)
	second := make(chan struct{})
	w.run(func() {
		w.run(func() { close(second) })
		<-second
	})
}
