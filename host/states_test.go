package host

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

func handoffTool() *agent.Tool {
	return &agent.Tool{Name: "escalateToHuman", Description: "Hand over to a person.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) {
			return map[string]string{"ticketId": "T-1"}, nil
		}}
}

// A conversation goes assistant → waiting (a hand-off tool succeeded) →
// human (an operator took it: the customer's message is stored and
// delivered, the model is not called) → assistant (handed back: the model
// answers again), and each change is an event a stream reads.
func TestConversationStates(t *testing.T) {
	ctx := context.Background()
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "escalateToHuman", map[string]string{})}},
		scripted.Turn{Text: "A person will take over."},
		scripted.Turn{Text: "Someone is coming."},
		scripted.Turn{Text: "Back with you."},
	)
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{handoffTool()}, Store: openTestStore(t),
		Handoff: func(server, tool string) bool { return server == "local" && tool == "escalateToHuman" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ss := h.Sessions()
	id := ss.NewID()
	if err := ss.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	if st, err := ss.State(ctx, id); err != nil || st.State != StateAssistant {
		t.Fatalf("a new session: %+v, %v; want assistant", st, err)
	}
	if _, err := h.Run(ctx, Turn{Session: id, Text: "转人工"}); err != nil {
		t.Fatal(err)
	}
	if st, _ := ss.State(ctx, id); st.State != StateWaiting {
		t.Fatalf("after the hand-off tool: %+v, want waiting", st)
	}
	// Waiting: the assistant still answers until someone takes over.
	if res, err := h.Run(ctx, Turn{Session: id, Text: "hello?"}); err != nil || res.Answer != "Someone is coming." {
		t.Fatalf("while waiting: %+v, %v", res, err)
	}

	if _, err := ss.Transition(ctx, id, []ConvState{StateWaiting}, StateHuman, "ana",
		SessionEvent{Kind: EventKindOperatorJoined, Operator: "ana"}); err != nil {
		t.Fatal(err)
	}
	// A second operator cannot take the same conversation.
	_, err = ss.Transition(ctx, id, []ConvState{StateWaiting}, StateHuman, "bo")
	var conflict *StateConflictError
	if !errors.As(err, &conflict) || conflict.Now.Operator != "ana" {
		t.Fatalf("a second takeover: %v, want a conflict naming ana", err)
	}

	calls := len(m.Requests())
	var kinds []EventKind
	res, err := h.Run(ctx, Turn{Session: id, Text: "my parcel is lost", OnEvent: func(ev Event) { kinds = append(kinds, ev.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Requests()) != calls {
		t.Errorf("the model was called while an operator held the conversation")
	}
	if res.Queued == nil || res.Queued.Operator != "ana" || res.Answer != "" {
		t.Errorf("queued turn: %+v", res)
	}
	if len(kinds) != 3 || kinds[0] != EventAccepted || kinds[1] != EventQueued || kinds[2] != EventDone {
		t.Errorf("events %v, want accepted, queued, done", kinds)
	}
	win, err := ss.Window(ctx, id, 100)
	if err != nil || len(win) == 0 || win[len(win)-1].Content != "my parcel is lost" {
		t.Fatalf("the queued message is not in the transcript: %+v, %v", win, err)
	}
	evs, err := ss.Events(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Kind+":"+string(ev.State)+ev.Content)
	}
	want := []string{"state:waiting", "state:human", "operator_joined:", "customer_message:my parcel is lost"}
	if len(got) != len(want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %q, want %q", got, want)
		}
	}
	// Every session's events, and from a point on.
	if all, _ := ss.Events(ctx, "", evs[1].Seq, 0); len(all) != 2 {
		t.Errorf("events after the second: %d, want 2", len(all))
	}

	if _, err := ss.Transition(ctx, id, []ConvState{StateHuman}, StateAssistant, ""); err != nil {
		t.Fatal(err)
	}
	if res, err := h.Run(ctx, Turn{Session: id, Text: "thanks"}); err != nil || res.Answer != "Back with you." {
		t.Fatalf("after hand-back: %+v, %v", res, err)
	}
}

// The queue lists waiting conversations oldest first, a page at a time.
func TestByStatePages(t *testing.T) {
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	h, err := newHost(ctx, config{Model: scripted.New(), Store: openTestStore(t), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ss := h.Sessions()
	ids := []string{"c", "a", "b"}
	for i, id := range ids {
		now = now.Add(time.Duration(i) * time.Second)
		if err := ss.Create(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := ss.Transition(ctx, id, []ConvState{StateAssistant}, StateWaiting, ""); err != nil {
			t.Fatal(err)
		}
	}
	p1, err := ss.ByState(ctx, StateWaiting, 0, "", 2)
	if err != nil || len(p1) != 2 || p1[0].ID != "c" || p1[1].ID != "a" {
		t.Fatalf("first page %+v, %v", p1, err)
	}
	last := p1[len(p1)-1]
	p2, err := ss.ByState(ctx, StateWaiting, last.Since.UnixMilli(), last.ID, 2)
	if err != nil || len(p2) != 1 || p2[0].ID != "b" {
		t.Fatalf("second page %+v, %v", p2, err)
	}
	if _, err := ss.Transition(ctx, "nope", []ConvState{StateAssistant}, StateWaiting, ""); !errors.Is(err, ErrNoSession) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := ParseConvState("busy"); err == nil {
		t.Error("ParseConvState took busy")
	}
}
