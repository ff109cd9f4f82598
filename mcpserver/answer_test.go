package mcpserver

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
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
