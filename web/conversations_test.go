package web

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// get opens a GET (a standing stream) with optional header pairs.
func (e *testEnv) get(t *testing.T, path string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.url(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// event returns the next named event of a standing stream (comments
// read as unnamed events and are skipped).
func (s *sseStream) event(t *testing.T) ConversationEvent {
	t.Helper()
	for {
		ev, ok := s.next(t)
		if !ok {
			t.Fatal("the stream ended")
		}
		if ev.Name == "" {
			continue
		}
		var ce ConversationEvent
		ev.decode(t, &ce)
		if ce.Kind != ev.Name {
			t.Fatalf("event %s carries kind %s", ev.Name, ce.Kind)
		}
		return ce
	}
}

func (e *testEnv) operatorPost(t *testing.T, id, action, body string) int {
	t.Helper()
	resp := e.post(t, "/operator/sessions/"+id+"/"+action, body)
	resp.Body.Close()
	return resp.StatusCode
}

// The whole hand-off: "转人工" shows on the operators' stream, the
// takeover and the operator's messages on the customer's, a customer
// message while held reaches the operator and not the model, a second
// operator is refused, the hand-back's note goes to the assistant with
// the next message (not to the customer), and the transcript keeps the
// operator's messages. A stream that comes back with Last-Event-ID gets
// what it missed.
func TestTakeoverAndHandBack(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	ctx := context.Background()
	id := e.newSession(t)
	ops := readStream(t, e.get(t, "/operator/events"))
	cust := readStream(t, e.get(t, "/api/sessions/"+id+"/events"))

	e.send(t, id, "转人工").rest(t)
	if ev := ops.event(t); ev.Kind != "state" || ev.State != host.StateWaiting || ev.Session != id {
		t.Fatalf("operators' first event %+v, want the session waiting", ev)
	}
	if ev := cust.event(t); ev.Kind != "state" || ev.State != host.StateWaiting {
		t.Fatalf("customer's first event %+v", ev)
	}

	if code := e.operatorPost(t, id, "takeover", `{"name":"ana"}`); code != http.StatusOK {
		t.Fatalf("takeover: %d", code)
	}
	if ev := cust.event(t); ev.Kind != "state" || ev.State != host.StateHuman || ev.Operator != "ana" {
		t.Fatalf("after takeover %+v", ev)
	}
	joined := cust.event(t)
	if joined.Kind != "operator_joined" || joined.Operator != "ana" {
		t.Fatalf("after takeover %+v, want operator_joined", joined)
	}
	if code := e.operatorPost(t, id, "takeover", `{"name":"bo"}`); code != http.StatusConflict {
		t.Errorf("a second operator's takeover: %d, want 409", code)
	}
	if code := e.operatorPost(t, id, "messages", `{"content":"hi","name":"bo"}`); code != http.StatusConflict {
		t.Errorf("a message from an operator who does not hold it: %d, want 409", code)
	}
	if code := e.operatorPost(t, id, "messages", `{"content":"Hello, I am Ana. 我来帮您。","name":"ana"}`); code != http.StatusOK {
		t.Fatalf("operator message: %d", code)
	}
	if ev := cust.event(t); ev.Kind != "operator_message" || ev.Content != "Hello, I am Ana. 我来帮您。" || ev.Operator != "ana" {
		t.Fatalf("operator message on the customer's stream: %+v", ev)
	}

	// The customer writes while held: queued, and on the operators' stream.
	if got := names(e.send(t, id, "my parcel A-1024 is late").rest(t)); strings.Join(got, ",") != "session,queued,done" {
		t.Fatalf("message while held: %v", got)
	}
	var sawMessage bool
	for !sawMessage {
		ev := ops.event(t)
		sawMessage = ev.Kind == "customer_message" && ev.Content == "my parcel A-1024 is late" && ev.Operator == "ana"
	}

	// A stream that comes back after operator_joined gets the message
	// sent while it was away.
	back := readStream(t, e.get(t, "/api/sessions/"+id+"/events", "Last-Event-ID", strconv.FormatInt(joined.Seq, 10)))
	if ev := back.event(t); ev.Kind != "operator_message" {
		t.Fatalf("resumed stream's first event %+v", ev)
	}

	if code := e.operatorPost(t, id, "handback", `{"note":"refund approved for A-1024","name":"ana"}`); code != http.StatusOK {
		t.Fatalf("handback: %d", code)
	}
	for _, want := range []string{"state", "operator_left"} {
		ev := cust.event(t)
		if ev.Kind != want || ev.Note != "" {
			t.Fatalf("after hand-back %+v, want %s without the note", ev, want)
		}
	}
	evs := e.send(t, id, "订单 A-1024 到哪了？").rest(t)
	last := evs[len(evs)-1]
	var done DoneEvent
	last.decode(t, &done)
	if last.Name != "done" || done.Queued || !strings.Contains(done.Answer, "A-1024") {
		t.Fatalf("after hand-back the assistant answers: %v %+v", names(evs), done)
	}
	// The note went to the model with that message, and stays out of
	// what the customer sees.
	win, err := e.srv.h.Sessions().Window(ctx, id, 100)
	if err != nil {
		t.Fatal(err)
	}
	var noted bool
	for _, m := range win {
		noted = noted || strings.Contains(m.Content, "refund approved for A-1024")
	}
	if !noted {
		t.Error("the hand-back note is not in the model's conversation")
	}
	var sawOperator bool
	for _, h := range e.history(t, id) {
		if strings.Contains(h.Content, "refund approved") {
			t.Errorf("the transcript shows the note: %+v", h)
		}
		sawOperator = sawOperator || h.Role == "operator" && h.Operator == "ana" && h.Content == "Hello, I am Ana. 我来帮您。"
	}
	if !sawOperator {
		t.Error("the transcript lost the operator's message")
	}
}

// A session has at most 4 standing streams; an unknown session none.
func TestSessionStreamBounds(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	id := e.newSession(t)
	for range maxSessionStreams {
		readStream(t, e.get(t, "/api/sessions/"+id+"/events"))
	}
	resp := e.get(t, "/api/sessions/"+id+"/events")
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a fifth stream: %s, want 429", resp.Status)
	}
	resp = e.get(t, "/api/sessions/s-nope/events")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session: %s, want 404", resp.Status)
	}
	resp = e.get(t, "/api/sessions/"+id+"/events", "Last-Event-ID", "x")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a bad Last-Event-ID: %s", resp.Status)
	}
}

// Named operators: the token names the operator, and a wrong one is
// refused.
func TestNamedOperators(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), func(o *envOptions) {
		o.Operators = []Operator{{Name: "Ana Li", Token: "tok-ana"}}
	})
	id := e.newSession(t)
	resp := e.post(t, "/operator/sessions/"+id+"/takeover", `{"name":"mallory"}`, "Authorization", "Bearer tok-ana")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("takeover with a named token: %s", resp.Status)
	}
	st, _ := e.srv.h.Sessions().State(context.Background(), id)
	if st.Operator != "Ana Li" {
		t.Errorf("held by %q, want the token's name", st.Operator)
	}
	resp = e.post(t, "/operator/sessions/"+id+"/handback", `{}`, "Authorization", "Bearer wrong")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a wrong token: %s, want 401", resp.Status)
	}
	if _, err := ParseOperator("nocolon"); err == nil {
		t.Error("ParseOperator took a value without a token")
	}
}

// The customer on one replica and the operator on another, over one
// PostgreSQL: every event crosses through the database.
func TestTakeoverAcrossReplicas(t *testing.T) {
	db := storetest.NewPostgres(t)
	open := func() *store.Store {
		st, err := store.OpenURL(context.Background(), db.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a := newEnv(t, offline.New(offlineDemo), func(o *envOptions) { o.Store = open() })
	b := newEnv(t, offline.New(offlineDemo), func(o *envOptions) { o.Store = open() })
	id := a.newSession(t)
	ops := readStream(t, b.get(t, "/operator/events"))
	cust := readStream(t, a.get(t, "/api/sessions/"+id+"/events"))
	a.send(t, id, "转人工").rest(t)
	if ev := ops.event(t); ev.Kind != "state" || ev.State != host.StateWaiting {
		t.Fatalf("replica b's operators' stream: %+v", ev)
	}
	if code := b.operatorPost(t, id, "takeover", `{"name":"ana"}`); code != http.StatusOK {
		t.Fatalf("takeover on b: %d", code)
	}
	cust.event(t) // state waiting
	cust.event(t) // state human
	if ev := cust.event(t); ev.Kind != "operator_joined" {
		t.Fatalf("replica a's customer stream: %+v", ev)
	}
	if code := b.operatorPost(t, id, "messages", `{"content":"hello from b","name":"ana"}`); code != http.StatusOK {
		t.Fatalf("message on b: %d", code)
	}
	if ev := cust.event(t); ev.Kind != "operator_message" || ev.Content != "hello from b" {
		t.Fatalf("replica a's customer stream: %+v", ev)
	}
	if got := names(a.send(t, id, "still there?").rest(t)); strings.Join(got, ",") != "session,queued,done" {
		t.Fatalf("message on a while held on b: %v", got)
	}
	for {
		if ev := ops.event(t); ev.Kind == "customer_message" {
			break
		}
	}
	if code := b.operatorPost(t, id, "handback", `{"note":"all sorted","name":"ana"}`); code != http.StatusOK {
		t.Fatalf("handback on b: %d", code)
	}
	evs := a.send(t, id, "订单 A-1024 到哪了？").rest(t)
	var done DoneEvent
	evs[len(evs)-1].decode(t, &done)
	if done.Queued || done.Answer == "" {
		t.Fatalf("after hand-back on b, a's assistant answers: %+v", done)
	}
}

// An idle standing stream gets a keep-alive comment at each interval.
func TestStandingStreamKeepAlive(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	e.srv.keepAlive = 20 * time.Millisecond
	id := e.newSession(t)
	resp := e.get(t, "/api/sessions/"+id+"/events")
	defer resp.Body.Close()
	stop := time.AfterFunc(5*time.Second, func() { resp.Body.Close() }) // the read is bounded
	defer stop.Stop()
	sc := bufio.NewScanner(resp.Body)
	var comments []string
	for len(comments) < 3 && sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, ": ") {
			comments = append(comments, line)
		}
	}
	if len(comments) < 3 || comments[1] != ": keep-alive" || comments[2] != ": keep-alive" {
		t.Fatalf("comments %q, want the opening one then keep-alives", comments)
	}
}
