package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/offline"
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
	if n, err := e.srv.releaseAbsent(ctx); n != 1 || err != nil {
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
