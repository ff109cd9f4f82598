package chat

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/testkit"
)

type recordingConfirmer struct {
	running bool
	spin    *spinner
}

func (r *recordingConfirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	r.spin.mu.Lock()
	r.running = r.spin.stop != nil
	r.spin.mu.Unlock()
	return guard.Decision{Approved: true}
}

// TestPausingConfirmerStopsTheSpinner checks that no spinner frame can be
// drawn over a confirmation question, and that the spinner comes back for
// the call once the question is answered.
func TestPausingConfirmerStopsTheSpinner(t *testing.T) {
	out := &testkit.SyncBuffer{} // the spinner's goroutine writes it
	s := &spinner{w: out}
	s.start("thinking…")
	var cur atomic.Pointer[spinner]
	cur.Store(s)
	inner := &recordingConfirmer{spin: s}
	p := &pausingConfirmer{inner: inner, spin: &cur}
	d := p.Confirm(context.Background(), guard.ConfirmRequest{Tool: "createTicket"})
	if !d.Approved {
		t.Fatal("the inner decision was not passed through")
	}
	if inner.running {
		t.Fatal("the spinner was still running while the question was asked")
	}
	s.mu.Lock()
	restarted := s.stop != nil
	s.mu.Unlock()
	s.halt()
	if !restarted || !strings.Contains(out.String(), "running createTicket…") {
		t.Fatalf("spinner not restarted for the call; output %q", out.String())
	}
	// No spinner (not a terminal): the confirmer still works.
	var none atomic.Pointer[spinner]
	if d := (&pausingConfirmer{inner: &recordingConfirmer{spin: &spinner{}}, spin: &none}).Confirm(context.Background(), guard.ConfirmRequest{Tool: "x"}); !d.Approved {
		t.Fatal("decision lost without a spinner")
	}
}

// TestSpinnerEscapesItsLabel: the label names tools the model asked for,
// which can hold anything; a terminal escape in one is shown escaped.
func TestSpinnerEscapesItsLabel(t *testing.T) {
	out := &testkit.SyncBuffer{}
	s := &spinner{w: out}
	s.start("running evil\x1b[2J\u202e…")
	out.WaitFor(t, "running", 10*time.Second)
	s.halt()
	got := strings.ReplaceAll(strings.ReplaceAll(out.String(), "\x1b[K", ""), "\r\x1b", "")
	if strings.Contains(got, "\x1b[2J") || strings.Contains(got, "\u202e") || !strings.Contains(got, `evil\x1b[2J\u202e`) {
		t.Errorf("spinner wrote %q; want the escape and the override escaped", out.String())
	}
}
