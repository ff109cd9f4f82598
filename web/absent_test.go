package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// A held conversation whose operator is gone (no operator stream open,
// nothing done on it) returns to the waiting queue after the timeout, with
// the state and operator_left on both streams; an open operator stream or
// an action keeps it held. On a fake clock.
func TestAbsentOperatorReleases(t *testing.T) {
	clock := newFakeClock()
	e := newEnv(t, offline.New(offlineDemo), func(o *envOptions) {
		o.Clock = clock
		o.OperatorTimeout = 2 * time.Minute
	})
	ctx := context.Background()
	id := e.newSession(t)
	cust := readStream(t, e.get(t, "/api/sessions/"+id+"/events"))
	e.send(t, id, "转人工").rest(t)
	if code := e.operatorPost(t, id, "takeover", `{"name":"ana"}`); code != http.StatusOK {
		t.Fatalf("takeover: %d", code)
	}
	state := func() host.ConvState {
		t.Helper()
		st, err := e.srv.sessions.State(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return st.State
	}

	// An operator stream is open: held however long.
	ops := e.get(t, "/operator/events")
	t.Cleanup(func() { ops.Body.Close() }) // before the server closes, on a failure too
	clock.Advance(10 * time.Minute)
	if n, err := e.srv.releaseAbsent(ctx); n != 0 || err != nil || state() != host.StateHuman {
		t.Fatalf("with an operator stream open: released %d, %v; state %s", n, err, state())
	}
	ops.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		e.srv.present.mu.Lock()
		open := e.srv.present.streams
		e.srv.present.mu.Unlock()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the operator stream was not closed within 10 s")
		}
	}

	// The stream closed; a message a minute later restarts the count.
	clock.Advance(time.Minute)
	if code := e.operatorPost(t, id, "messages", `{"content":"one moment","name":"ana"}`); code != http.StatusOK {
		t.Fatalf("operator message: %d", code)
	}
	clock.Advance(time.Minute + 59*time.Second)
	if n, err := e.srv.releaseAbsent(ctx); n != 0 || err != nil || state() != host.StateHuman {
		t.Fatalf("before the timeout: released %d, %v; state %s", n, err, state())
	}
	clock.Advance(time.Second)
	// The server's own round (on the same fake clock) may release it
	// first: then this call finds nothing left to do.
	if n, err := e.srv.releaseAbsent(ctx); n > 1 || err != nil {
		t.Fatalf("after the timeout: released %d, %v", n, err)
	}
	if got := state(); got != host.StateWaiting {
		t.Fatalf("after the timeout the conversation is %s, want waiting", got)
	}
	// The customer saw waiting, the takeover, the message, then waiting
	// again and the operator leaving.
	var kinds []string
	for len(kinds) == 0 || kinds[len(kinds)-1] != "operator_left:" {
		ev := cust.event(t)
		kinds = append(kinds, ev.Kind+":"+string(ev.State))
		if len(kinds) > 10 {
			t.Fatalf("customer's events %v", kinds)
		}
	}
	want := "state:waiting state:human operator_joined: operator_message: state:waiting operator_left:"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("customer's events %q, want %q", got, want)
	}
	// The operators' stream (resumed from the start) has them too.
	back := readStream(t, e.get(t, "/operator/events", "Last-Event-ID", "0"))
	var last ConversationEvent
	for last.Kind != "operator_left" {
		last = back.event(t)
	}
	if last.Operator != "ana" || last.Session != id {
		t.Fatalf("operators' operator_left %+v", last)
	}
	// And an operator can take it again.
	if code := e.operatorPost(t, id, "takeover", `{"name":"bo"}`); code != http.StatusOK {
		t.Fatalf("takeover after the release: %d", code)
	}
}

// Two replicas over one database: an operator stream open on replica a
// keeps the conversation held however long, though b has no operator
// stream (b reads a's heartbeats); once a's stream closes, b releases it
// after the timeout counted from the close. On a fake clock both share.
func TestAbsentOperatorAcrossReplicas(t *testing.T) {
	t.Run("selected", func(t *testing.T) { testAbsentAcrossReplicas(t, storetest.New(t)) }) // SQLite unless CI's PostgreSQL run
	t.Run("postgres", func(t *testing.T) { testAbsentAcrossReplicas(t, storetest.NewPostgres(t)) })
}

func testAbsentAcrossReplicas(t *testing.T, db *storetest.Database) {
	clock := newFakeClock()
	replica := func() *testEnv {
		st, err := store.OpenURL(context.Background(), db.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		return newEnv(t, offline.New(offlineDemo), func(o *envOptions) {
			o.Store, o.Clock, o.OperatorTimeout = st, clock, 2*time.Minute
		})
	}
	a, b := replica(), replica()
	ctx := context.Background()
	id := a.newSession(t)
	a.send(t, id, "转人工").rest(t)
	if code := a.operatorPost(t, id, "takeover", `{"name":"ana"}`); code != http.StatusOK {
		t.Fatalf("takeover: %d", code)
	}
	state := func() host.ConvState {
		t.Helper()
		st, err := b.srv.sessions.State(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return st.State
	}
	// seenAt waits until a stream's heartbeat has written the clock's
	// time (the heartbeat runs on its own goroutine).
	seenAt := func() {
		t.Helper()
		want := clock.Now().UnixMilli()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			var got int64
			err := a.srv.h.Store().DB.QueryRowContext(ctx, `SELECT COALESCE(MAX(seen_at), 0) FROM web_operator_presence WHERE session_id = ''`).Scan(&got)
			if err == nil && got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the operator stream's heartbeat did not write %d within 10 s (last %d, %v)", want, got, err)
			}
		}
	}

	ops := a.get(t, "/operator/events")
	t.Cleanup(func() { ops.Body.Close() }) // before the servers close, on a failure too
	seenAt()
	for range 20 { // 10 minutes, five timeouts
		clock.Advance(a.srv.heartbeatEvery())
		seenAt()
		if n, err := b.srv.releaseAbsent(ctx); n != 0 || err != nil || state() != host.StateHuman {
			t.Fatalf("with an operator stream open on a, b released %d, %v; state %s", n, err, state())
		}
	}
	ops.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		a.srv.present.mu.Lock()
		open := a.srv.present.streams
		a.srv.present.mu.Unlock()
		if open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the operator stream was not closed within 10 s")
		}
	}
	clock.Advance(2*time.Minute - time.Second)
	if n, err := b.srv.releaseAbsent(ctx); n != 0 || err != nil || state() != host.StateHuman {
		t.Fatalf("within the timeout of the stream's close: b released %d, %v; state %s", n, err, state())
	}
	clock.Advance(time.Second)
	// The replicas' own rounds (on the same fake clock) may release it
	// first: then b's call finds nothing left to do.
	if n, err := b.srv.releaseAbsent(ctx); n > 1 || err != nil {
		t.Fatalf("after the timeout: b released %d, %v", n, err)
	}
	if got := state(); got != host.StateWaiting {
		t.Fatalf("after the timeout the conversation is %s, want waiting", got)
	}
}
