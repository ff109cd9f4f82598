package web

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
)

// arrive starts a message's wait at the bubble's current time and reports,
// on the channel, how long it waited.
func arrive(b *burst, ctx context.Context) <-chan time.Duration {
	waited := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		b.wait(ctx)
		waited <- time.Since(start)
	}()
	synctest.Wait() // the message has joined the burst (or passed)
	return waited
}

func TestBurstLoneMessageDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBurst(time.Millisecond, 20*time.Millisecond)
		for i := range 3 {
			if d := <-arrive(b, t.Context()); d != 0 {
				t.Fatalf("message %d, alone, waited %v", i, d)
			}
			time.Sleep(2 * time.Millisecond) // more than quiet apart
		}
	})
}

func TestBurstHoldsTurnsUntilArrivalsPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBurst(time.Millisecond, 20*time.Millisecond)
		first := arrive(b, t.Context()) // t=0: alone so far, runs at once
		time.Sleep(500 * time.Microsecond)
		second := arrive(b, t.Context()) // t=0.5 ms: joins a burst
		time.Sleep(700 * time.Microsecond)
		third := arrive(b, t.Context()) // t=1.2 ms: still within quiet of the last
		if n := b.inWait(); n != 2 {
			t.Fatalf("%d turns wait, want 2", n)
		}
		// Released together, quiet after the last arrival (t=2.2 ms).
		if d := <-first; d != 0 {
			t.Errorf("the first message waited %v", d)
		}
		if d := <-second; d != 1700*time.Microsecond {
			t.Errorf("the second message waited %v, want 1.7ms", d)
		}
		if d := <-third; d != time.Millisecond {
			t.Errorf("the third message waited %v, want 1ms", d)
		}
		if n := b.inWait(); n != 0 {
			t.Errorf("%d turns still wait", n)
		}
		// After the pause, a message is alone again.
		time.Sleep(2 * time.Millisecond)
		if d := <-arrive(b, t.Context()); d != 0 {
			t.Errorf("a message after the burst waited %v", d)
		}
	})
}

func TestBurstWaitIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBurst(time.Millisecond, 20*time.Millisecond)
		var waits []<-chan time.Duration
		// A message every 0.5 ms for 60 ms: the arrivals never pause.
		for range 120 {
			waits = append(waits, arrive(b, t.Context()))
			time.Sleep(500 * time.Microsecond)
		}
		for i, w := range waits {
			if d := <-w; d > 20*time.Millisecond {
				t.Errorf("message %d waited %v, over the 20ms bound", i, d)
			}
		}
		// The second message (the first to wait) is released at the bound.
		b2 := newBurst(time.Millisecond, 20*time.Millisecond)
		arrive(b2, t.Context())
		time.Sleep(100 * time.Microsecond)
		held := arrive(b2, t.Context())
		stop, finished := make(chan struct{}), make(chan []<-chan time.Duration)
		go func() { // a message every 0.5 ms until stopped
			var more []<-chan time.Duration
			for {
				select {
				case <-stop:
					finished <- more
					return
				case <-time.After(500 * time.Microsecond):
					more = append(more, arrive(b2, t.Context()))
				}
			}
		}()
		if d := <-held; d != 20*time.Millisecond {
			t.Errorf("the oldest waiting message waited %v, want the 20ms bound", d)
		}
		close(stop)
		for _, w := range <-finished {
			if d := <-w; d > 20*time.Millisecond {
				t.Errorf("a message waited %v, over the 20ms bound", d)
			}
		}
	})
}

func TestBurstEndsOnCancelAndFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBurst(time.Hour, time.Hour)
		arrive(b, t.Context())
		ctx, cancel := context.WithCancel(t.Context())
		cancelled := arrive(b, ctx)
		flushed := arrive(b, t.Context())
		cancel()
		if d := <-cancelled; d != 0 {
			t.Errorf("a cancelled wait ended after %v", d)
		}
		b.flush() // as at shutdown
		if d := <-flushed; d != 0 {
			t.Errorf("a flushed wait ended after %v", d)
		}
	})
}

// countingModel counts the model calls of turns.
type countingModel struct {
	model.Model
	calls atomic.Int32
}

func (m *countingModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	m.calls.Add(1)
	return m.Model.Stream(ctx, req, onText)
}

func (m *countingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.calls.Add(1)
	return m.Model.Generate(ctx, req)
}

// A message that comes while another burst is arriving gets its first
// event at once; its turn waits for the burst to end and then runs whole.
func TestMessageInBurstGetsFirstEventBeforeItsTurn(t *testing.T) {
	m := &countingModel{Model: offline.New(offlineDemo)}
	e := newEnv(t, m, nil)
	e.srv.burst = newBurst(time.Hour, time.Hour) // every later message joins the burst
	a, b := e.newSession(t), e.newSession(t)
	if evs := e.send(t, a, "订单 A-1024 到哪了？").rest(t); evs[len(evs)-1].Name != "done" {
		t.Fatalf("the first message, alone, ended with %v", names(evs))
	}
	before := m.calls.Load()
	if before == 0 {
		t.Fatal("the first turn made no model call")
	}
	s := e.send(t, b, "订单 A-1024 到哪了？")
	if ev, _ := s.next(t); ev.Name != "session" {
		t.Fatalf("first event %q, want session", ev.Name)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.srv.burst.inWait() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the second message's turn never waited in the burst")
		}
		time.Sleep(time.Millisecond)
	}
	if n := m.calls.Load(); n != before {
		t.Fatalf("the model was called %d times for a turn held in the burst", n-before)
	}
	e.srv.burst.flush()
	evs := s.rest(t)
	if len(evs) == 0 || evs[len(evs)-1].Name != "done" {
		t.Fatalf("the held turn ended with %v, want done", names(evs))
	}
	if m.calls.Load() == before {
		t.Error("the held turn made no model call once released")
	}
}

// TestBurstDifferential runs the same concurrent messages with turns held
// in bursts and with no holding at all: the same events, answers and
// stored transcripts.
func TestBurstDifferential(t *testing.T) {
	type outcome struct {
		events  [][]string // event names, per session
		answers [][]string // per session
		history [][]string // per session: role: content
	}
	msgs := []string{"订单 A-1024 到哪了？", "退货政策是什么？", "订单 B-2048 呢？", "你好"}
	run := func(t *testing.T, hold bool) outcome {
		e := newEnv(t, offline.New(offlineDemo), nil)
		if hold {
			e.srv.burst = newBurst(50*time.Millisecond, time.Second) // each round in one burst
		} else {
			e.srv.burst = newBurst(0, 0) // every message alone: no wait
		}
		n := len(msgs)
		o := outcome{events: make([][]string, n), answers: make([][]string, n), history: make([][]string, n)}
		ids := make([]string, n)
		for i := range ids {
			ids[i] = e.newSession(t)
		}
		var wg sync.WaitGroup
		for round := range 2 { // two turns in each session, each round all at once
			for i, id := range ids {
				wg.Go(func() {
					evs := e.send(t, id, msgs[(i+round)%n]).rest(t)
					var done DoneEvent
					if len(evs) > 0 {
						evs[len(evs)-1].decode(t, &done)
					}
					o.events[i] = append(o.events[i], names(evs)...)
					o.answers[i] = append(o.answers[i], done.Answer)
				})
			}
			wg.Wait()
		}
		for i, id := range ids {
			for _, m := range e.history(t, id) {
				o.history[i] = append(o.history[i], m.Role+": "+m.Content)
			}
		}
		return o
	}
	free, held := run(t, false), run(t, true)
	for i := range msgs {
		if !slices.Equal(free.events[i], held.events[i]) {
			t.Errorf("session %d: events %v without holding, %v held", i, free.events[i], held.events[i])
		}
		if !slices.Equal(free.answers[i], held.answers[i]) {
			t.Errorf("session %d: answers %q without holding, %q held", i, free.answers[i], held.answers[i])
		}
		if !slices.Equal(free.history[i], held.history[i]) || len(held.history[i]) != 4 {
			t.Errorf("session %d: transcript %q without holding, %q held (want 4 messages)", i, free.history[i], held.history[i])
		}
		if ev := held.events[i]; len(ev) < 4 || ev[0] != "session" || ev[len(ev)-1] != "done" {
			t.Errorf("session %d: events %v, want session … done twice", i, ev)
		}
	}
}
