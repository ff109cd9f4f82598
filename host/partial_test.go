package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// viewServer is a server whose tools named show_* link a view.
type viewServer struct{ liveServer }

func (s *viewServer) ToolMeta(name string) map[string]any {
	if strings.HasPrefix(name, "show_") {
		return map[string]any{"ui": map[string]any{"resourceUri": "ui://" + s.name + "/" + name + ".html"}}
	}
	return nil
}

// TestRunToolInputPartial: with Turn.ToolInputPartial, the pieces of a
// call to a tool that links a view are reported as valid JSON objects
// before the call starts, the last one the whole input; a tool without a
// view, or a turn that did not ask, gets none.
func TestRunToolInputPartial(t *testing.T) {
	ctx := context.Background()
	srv := &viewServer{liveServer{name: "maps"}}
	srv.offer("show_map", "plain")
	args := `{"city":"上海","days":[1,2,3],"note":"a \"quoted\" word"}`
	turn := func() []scripted.Turn {
		return []scripted.Turn{
			{Calls: []model.ToolCall{scripted.Call("c1", "plain", `{"x":"yyyyyyyy"}`), scripted.Call("c2", "show_map", args)}, Piece: 3},
			{Text: "done"},
		}
	}
	m := scripted.New(append(turn(), turn()...)...)
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	run := func(partial bool) []Event {
		var mu sync.Mutex
		var evs []Event
		_, err := h.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "map"}}, Stream: true, ToolInputPartial: partial,
			OnEvent: func(ev Event) {
				if ev.Kind == EventToolInputPartial || ev.Kind == EventToolStart {
					mu.Lock()
					evs = append(evs, ev)
					mu.Unlock()
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	evs := run(true)
	var partials []string
	for _, ev := range evs {
		if ev.Kind == EventToolStart {
			break
		}
		if ev.Call.ID != "c2" || ev.Call.Name != "show_map" || ev.Server != "maps" || ev.Step != 1 {
			t.Errorf("partial event %+v", ev)
		}
		var v map[string]any
		if err := json.Unmarshal(ev.Call.Arguments, &v); err != nil {
			t.Errorf("partial input %s is not a JSON object: %v", ev.Call.Arguments, err)
		}
		partials = append(partials, string(ev.Call.Arguments))
	}
	kinds := make([]string, len(evs))
	for i, ev := range evs {
		kinds[i] = string(ev.Kind) + " " + ev.Call.ID
	}
	n := len(partials)
	if n < 2 || partials[n-1] != args {
		t.Fatalf("partial inputs %q; want at least two, the last the whole input", partials)
	}
	if got := strings.Join(kinds[n:], ","); got != "tool_start c1,tool_start c2" {
		t.Errorf("events %q; want the partial inputs, then the calls starting", kinds)
	}
	if evs := run(false); len(evs) != 2 {
		t.Errorf("a turn that did not ask for partial inputs got %d events, want the 2 starts", len(evs))
	}
}

// TestToolDeltaThrottled: a call's partial inputs are at least 50 ms
// apart, the pieces held back are reported when the call starts, an input
// that did not change or is not yet an object is not reported, and a call
// without an id or over maxPartialArgs stops being reported.
func TestToolDeltaThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		set, _ := agent.NewToolSet()
		for _, n := range []string{"show_a", "show_b", "plain"} {
			if err := set.Add(&agent.Tool{Name: n, Origin: "srv", Execute: func(context.Context, json.RawMessage) (any, error) { return nil, nil }}); err != nil {
				t.Fatal(err)
			}
		}
		var got []string
		start := time.Now()
		rt := &running{set: set, calls: map[string]model.ToolCall{},
			links: func(server, tool string) bool { return server == "srv" && strings.HasPrefix(tool, "show_") },
			onEvent: func(ev Event) {
				if ev.Kind != EventToolInputPartial {
					return
				}
				got = append(got, fmt.Sprintf("%v %s %s", time.Since(start), ev.Call.ID, ev.Call.Arguments))
			}}
		rt.Think(1, 0, 0)
		piece := func(i int, id, name, args string) {
			rt.toolDelta(model.ToolCallDelta{Index: i, ID: id, Name: name, Arguments: args})
		}
		piece(0, "a", "show_a", `{"k":`) // {}: reported
		piece(1, "b", "plain", `{"x":1`)
		piece(2, "", "show_b", `{"y":1`) // no id: never reported
		time.Sleep(20 * time.Millisecond)
		piece(0, "a", "show_a", `1`) // held back
		time.Sleep(20 * time.Millisecond)
		piece(0, "a", "show_a", `2,`) // held back
		time.Sleep(20 * time.Millisecond)
		piece(0, "a", "show_a", `"m`) // 60 ms: reported with what was held, less the dangling key
		time.Sleep(60 * time.Millisecond)
		piece(0, "a", "show_a", `":`) // the same object: not reported
		piece(0, "a", "show_a", `true}`)
		rt.Act(1, nil)
		want := []string{
			`0s a {}`,
			`60ms a {"k":12}`,
			`120ms a {"k":12,"m":true}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("reported\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}

		// Over the cap: nothing more, not even at the call's start.
		got = nil
		rt.Think(2, 0, 0)
		piece(0, "a", "show_a", `{"k":"`)
		time.Sleep(time.Second)
		piece(0, "a", "show_a", strings.Repeat("x", maxPartialArgs))
		rt.Act(2, nil)
		if len(got) != 1 {
			t.Errorf("a call over the cap was reported %d times, want once (before it went over): %.80q", len(got), got)
		}
		// Pieces before the call's id or its tool's full name are not kept,
		// so the call is not reported: what follows them is not its input.
		got = nil
		rt.Think(3, 0, 0)
		piece(0, "", "show_a", `{"k":`)
		piece(0, "late", "show_a", `{"x":1`) // would read as {"x":1}
		piece(1, "b", "show", `{"k":`)
		piece(1, "b", "show_b", `{"y":2`)
		rt.Act(3, nil)
		if len(got) != 0 {
			t.Errorf("calls whose first pieces were missed were reported: %q", got)
		}
		// More calls than maxPartialCalls: the first ones are followed.
		got = nil
		rt.Think(4, 0, 0)
		for i := range maxPartialCalls + 5 {
			piece(i, fmt.Sprint("c", i), "show_a", `{}`)
		}
		rt.Act(4, nil)
		if len(got) != maxPartialCalls {
			t.Errorf("%d calls reported, want %d", len(got), maxPartialCalls)
		}
	})
}
