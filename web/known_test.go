package web

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/model/offline"
)

func TestKnownSessionsExpireAndAreCapped(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	k := newKnownSessions(2, time.Hour)
	k.add("a", t0)
	if !k.has("a", t0.Add(59*time.Minute)) {
		t.Error("an id added 59 min ago is not known (TTL 1 h)")
	}
	if k.has("a", t0.Add(time.Hour)) {
		t.Error("an id added 1 h ago is still known (TTL 1 h)")
	}
	if k.has("a", t0) {
		t.Error("an expired id is known again after it expired")
	}
	if k.has("b", t0) {
		t.Error("an id never added is known")
	}
	// Two generations of 2: the fifth id pushes the first two out.
	for i, id := range []string{"1", "2", "3", "4", "5"} {
		k.add(id, t0.Add(time.Duration(i)*time.Second))
	}
	now := t0.Add(time.Minute)
	for _, id := range []string{"3", "4", "5"} {
		if !k.has(id, now) {
			t.Errorf("id %s, among the last two generations, is not known", id)
		}
	}
	for _, id := range []string{"1", "2"} {
		if k.has(id, now) {
			t.Errorf("id %s outlived two generations", id)
		}
	}
	if n := len(k.cur) + len(k.old); n > 4 {
		t.Errorf("%d ids held, over the cap of 2 generations of 2", n)
	}
	var nilK *knownSessions
	nilK.add("x", now)
	if nilK.has("x", now) {
		t.Error("a nil knownSessions knows an id")
	}
}

// TestFirstEventWaitsForNoStoreConnection holds every connection of the
// store's pool, as running turns do under load, and sends a message to a
// session this server created: its first event must not wait for a
// connection. Before knownSessions, the existence check queued for one.
func TestFirstEventWaitsForNoStoreConnection(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	id := e.newSession(t)

	ctx := context.Background()
	var held []*sql.Conn
	release := func() {
		for _, c := range held {
			c.Close()
		}
		held = nil
	}
	t.Cleanup(release)
	// The pool's cap is 4 (store.maxConns); a fifth would block, so
	// take connections until one does not come at once.
	for range 16 {
		cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		c, err := e.st.DB.Conn(cctx)
		cancel()
		if err != nil {
			break
		}
		held = append(held, c)
	}
	if len(held) == 16 {
		t.Fatal("the store's pool gave 16 connections; this test needs a capped pool")
	}

	got := make(chan *http.Response, 1)
	failed := make(chan error, 1)
	go func() {
		// Do only returns once the headers, flushed with the first
		// event, arrive.
		req, _ := http.NewRequest(http.MethodPost, e.url("/api/sessions/"+id+"/messages"), strings.NewReader(`{"content":"订单 A-1024 到哪了？"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			failed <- err
			return
		}
		got <- resp
	}()
	var resp *http.Response
	select {
	case resp = <-got:
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		release() // lets the request finish, so the test ends
		select {
		case resp = <-got:
			resp.Body.Close()
		case <-failed:
		}
		t.Fatal("no response headers within 10 s while the store's connections were all in use: the first event waited for the store")
	}
	s := readStream(t, resp)
	ev, ok := s.next(t)
	if !ok || ev.Name != "session" {
		t.Fatalf("first event %q (stream open %v), want session", ev.Name, ok)
	}
	release()
	evs := s.rest(t)
	if len(evs) == 0 || evs[len(evs)-1].Name != "done" {
		t.Fatalf("events after session %v, want the turn to end with done once the store is free", names(evs))
	}
}

// TestKnownSessionsDifferential runs the same messages through a server
// that asks the store whether each session exists and through one that
// remembers the sessions it saw: the events and the stored transcripts
// must be the same, and so must the refusal of an id never issued.
func TestKnownSessionsDifferential(t *testing.T) {
	type outcome struct {
		events  [][]string // event names per message
		answers []string
		history [][]string // role: content, per session
		unknown int        // status of a message to an id never issued
		direct  []string   // events of a message to a session stored by another process
	}
	run := func(t *testing.T, remember bool) outcome {
		e := newEnv(t, offline.New(offlineDemo), nil)
		if !remember {
			e.srv.known = nil
		}
		var o outcome
		ids := []string{e.newSession(t), e.newSession(t)}
		msgs := []string{"订单 A-1024 到哪了？", "退货政策是什么？", "订单 B-2048 呢？"}
		for _, id := range ids {
			for _, m := range msgs {
				evs := e.send(t, id, m).rest(t)
				o.events = append(o.events, names(evs))
				var done DoneEvent
				evs[len(evs)-1].decode(t, &done)
				o.answers = append(o.answers, done.Answer)
			}
		}
		for _, id := range ids {
			var h []string
			for _, m := range e.history(t, id) {
				h = append(h, fmt.Sprintf("%s: %s", m.Role, m.Content))
			}
			o.history = append(o.history, h)
		}
		resp := e.post(t, "/api/sessions/w-neverissued/messages", `{"content":"你好"}`)
		resp.Body.Close()
		o.unknown = resp.StatusCode
		// A session another process created: this server learns of it
		// from the store.
		if err := e.srv.sessions.Create(context.Background(), "w-elsewhere"); err != nil {
			t.Fatal(err)
		}
		o.direct = names(e.send(t, "w-elsewhere", "你好").rest(t))
		if remember && !e.srv.known.has("w-elsewhere", e.srv.clock.Now()) {
			t.Error("a session found in the store is not remembered")
		}
		return o
	}
	viaStore, remembered := run(t, false), run(t, true)
	for i := range viaStore.events {
		if !slices.Equal(viaStore.events[i], remembered.events[i]) {
			t.Errorf("message %d: events %v through the store, %v remembered", i, viaStore.events[i], remembered.events[i])
		}
	}
	if !slices.Equal(viaStore.answers, remembered.answers) {
		t.Errorf("answers differ:\n store:      %q\n remembered: %q", viaStore.answers, remembered.answers)
	}
	for i := range viaStore.history {
		if !slices.Equal(viaStore.history[i], remembered.history[i]) {
			t.Errorf("session %d's transcript differs:\n store:      %q\n remembered: %q", i, viaStore.history[i], remembered.history[i])
		}
		if len(viaStore.history[i]) != 6 {
			t.Errorf("session %d holds %d messages, want 6 (3 turns)", i, len(viaStore.history[i]))
		}
	}
	if viaStore.unknown != http.StatusNotFound || remembered.unknown != http.StatusNotFound {
		t.Errorf("a message to an id never issued: %d through the store, %d remembered; want 404", viaStore.unknown, remembered.unknown)
	}
	if !slices.Equal(viaStore.direct, remembered.direct) || len(viaStore.direct) == 0 || viaStore.direct[len(viaStore.direct)-1] != "done" {
		t.Errorf("a session stored elsewhere: events %v through the store, %v remembered", viaStore.direct, remembered.direct)
	}
}
