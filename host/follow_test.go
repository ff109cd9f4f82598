package host

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// recorder is an agent.Observer that writes down its calls.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }
func (r *recorder) Think(step, messages, tools int) {
	r.add(fmt.Sprintf("think %d", step))
}
func (r *recorder) Act(step int, calls []model.ToolCall) {
	r.add(fmt.Sprintf("act %d %d calls", step, len(calls)))
}
func (r *recorder) Observe(ev agent.StepEvent) { r.add("observe " + ev.ToolName) }
func (r *recorder) Done(res *agent.Result, err error) {
	r.add(fmt.Sprintf("done steps=%d %q %v", res.Steps, res.Text, err))
}

// TestFollow: the turn's one event stream drives an observer (the trace)
// as the loop would: one act per reply with all its calls, each call's
// end, the turn's end with its tool rounds and answer.
func TestFollow(t *testing.T) {
	ctx := context.Background()
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", map[string]string{"orderId": "A-1"}), scripted.Call("c2", "getOrderStatus", map[string]string{"orderId": "A-2"})}},
		scripted.Turn{Text: "both shipped"},
	)
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{orderTool()}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rec := &recorder{}
	if _, err := h.Run(ctx, Turn{Session: "s", Text: "where are A-1 and A-2?", OnEvent: Follow(rec)}); err != nil {
		t.Fatal(err)
	}
	want := []string{"think 1", "act 1 2 calls", "observe getOrderStatus", "observe getOrderStatus", "think 2", `done steps=1 "both shipped" <nil>`}
	if !slices.Equal(rec.calls, want) {
		t.Errorf("the observer saw %q, want %q", rec.calls, want)
	}
}
