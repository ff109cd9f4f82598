package mcpserver

import (
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateWriter records each Write; the first one blocks until release is
// closed, standing for a write(2) still under way.
type gateWriter struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	writes  []string
}

func (w *gateWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	first := len(w.writes) == 0
	w.writes = append(w.writes, string(p))
	w.mu.Unlock()
	if first {
		close(w.entered)
		<-w.release
	}
	return len(p), nil
}

func (w *gateWriter) Close() error { return nil }

// TestAnswerDirectSharesWrites: answers that finish while another is being
// written are queued without waiting and go out together in the next
// write, each call ending only once its answer is out.
func TestAnswerDirectSharesWrites(t *testing.T) {
	w := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	c := &lineConn{r: io.NopCloser(strings.NewReader("")), w: w}
	for _, id := range []any{int64(1), int64(2), int64(3), int64(4)} {
		c.pending.startDirect(id, func() {})
	}
	firstDone := make(chan struct{})
	go func() {
		defer close(firstDone)
		c.answerDirect(int64(1), []byte(`{"id":1}`), true)
	}()
	<-w.entered
	// These return at once although the first write is still under way;
	// if they waited for it, the test would hang here.
	c.answerDirect(int64(2), []byte(`{"id":2}`), true)
	c.answerDirect(int64(3), nil, false) // the connection closing: no bytes
	c.answerDirect(int64(4), []byte(`{"id":4}`), true)
	c.pending.mu.Lock()
	left := len(c.pending.direct)
	c.pending.mu.Unlock()
	if left != 4 {
		t.Fatalf("%d calls in flight while their answers wait, want 4", left)
	}
	close(w.release)
	<-firstDone
	want := []string{"{\"id\":1}\n", "{\"id\":2}\n{\"id\":4}\n"}
	if strings.Join(w.writes, "|") != strings.Join(want, "|") {
		t.Errorf("writes %q, want %q", w.writes, want)
	}
	c.pending.wait(context.Background(), DefaultDrainTimeout, nil)
	c.pending.mu.Lock()
	left = len(c.pending.direct)
	c.pending.mu.Unlock()
	if left != 0 {
		t.Errorf("%d calls still in flight after their answers were written", left)
	}
}

// TestAnswerDirectBoundsTheQueue: while the writer is held (a client that
// does not read), answers queue only up to maxQueuedAnswers bytes; the
// next one waits for room instead of growing the queue, and once the
// writer moves on every answer goes out, in order.
func TestAnswerDirectBoundsTheQueue(t *testing.T) {
	w := &gateWriter{entered: make(chan struct{}), release: make(chan struct{})}
	c := &lineConn{r: io.NopCloser(strings.NewReader("")), w: w}
	answer := []byte(`{"a":"` + strings.Repeat("x", 1016) + `"}`) // 1,024 bytes and a newline
	n := 2*maxQueuedAnswers/(len(answer)+1) + 10
	for i := range n + 1 {
		c.pending.startDirect(int64(i), func() {})
	}
	go c.answerDirect(int64(0), answer, true) // becomes the writer, held in Write
	<-w.entered
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= n; i++ {
			c.answerDirect(int64(i), answer, true)
		}
	}()
	queued := func() int {
		c.outMu.Lock()
		defer c.outMu.Unlock()
		return len(c.out)
	}
	// Wait (bounded) for the queue to fill; it cannot pass the cap by more
	// than the one answer that reached it.
	deadline := time.Now().Add(30 * time.Second)
	for queued() < maxQueuedAnswers {
		if time.Now().After(deadline) {
			t.Fatalf("the queue holds %d bytes after 30 s, want it to fill to %d", queued(), maxQueuedAnswers)
		}
		runtime.Gosched()
	}
	select {
	case <-done:
		t.Fatal("every answer was queued while the writer was held: the queue is not bounded")
	default:
	}
	if q := queued(); q > maxQueuedAnswers+len(answer)+1 {
		t.Fatalf("the queue holds %d bytes, over the %d-byte bound and one answer", q, maxQueuedAnswers)
	}
	close(w.release)
	<-done
	c.pending.wait(context.Background(), DefaultDrainTimeout, nil)
	w.mu.Lock()
	lines := strings.Count(strings.Join(w.writes, ""), "\n")
	w.mu.Unlock()
	if lines != n+1 {
		t.Errorf("%d answers written, want %d", lines, n+1)
	}
}
