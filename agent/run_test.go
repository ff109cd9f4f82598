package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var echoSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":10}},"required":["text"],"additionalProperties":false}`)

func echoTool() *agent.Tool {
	return &agent.Tool{
		Name:        "echo",
		Description: "Echoes its text.",
		InputSchema: echoSchema,
		Validate:    true,
		Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return map[string]string{"echo": in.Text}, nil
		},
	}
}

func tools(t *testing.T, ts ...*agent.Tool) *agent.ToolSet {
	t.Helper()
	s, err := agent.NewToolSet(ts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func user(text string) []model.Message {
	return []model.Message{{Role: model.RoleUser, Content: text}}
}

func TestRunFinalAnswerWithoutTools(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "hello"})
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("hi"), Tools: tools(t, echoTool()), System: "be nice"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || res.Steps != 0 || len(res.Messages) != 2 {
		t.Fatalf("got text %q, steps %d, %d messages", res.Text, res.Steps, len(res.Messages))
	}
	reqs := m.Requests()
	if len(reqs) != 1 || reqs[0].System != "be nice" || len(reqs[0].Tools) != 1 || string(reqs[0].Tools[0].Parameters) != string(echoSchema) {
		t.Fatalf("unexpected request: %+v", reqs)
	}
}

func TestRunOneToolRoundEventsExact(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Text: "let me check", Calls: []model.ToolCall{scripted.Call("c1", "echo", `{"text":"hi"}`)}},
		scripted.Turn{Text: "done: hi"},
	)
	var events []agent.StepEvent
	res, err := agent.Run(context.Background(), agent.Options{
		Model: m, Messages: user("echo hi"), Tools: tools(t, echoTool()),
		OnStep: func(ev agent.StepEvent) { events = append(events, ev) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.StepEvent{{Step: 1, CallID: "c1", ToolName: "echo", Input: json.RawMessage(`{"text":"hi"}`), Output: `{"echo":"hi"}`, Text: "let me check"}}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if res.Text != "done: hi" || res.Steps != 1 {
		t.Fatalf("result %q after %d steps", res.Text, res.Steps)
	}
	wantMsgs := []model.Message{
		{Role: model.RoleUser, Content: "echo hi"},
		{Role: model.RoleAssistant, Content: "let me check", ToolCalls: []model.ToolCall{scripted.Call("c1", "echo", `{"text":"hi"}`)}},
		{Role: model.RoleTool, Content: `{"echo":"hi"}`, ToolCallID: "c1", Name: "echo"},
		{Role: model.RoleAssistant, Content: "done: hi"},
	}
	if diff := cmp.Diff(wantMsgs, res.Messages); diff != "" {
		t.Fatalf("history (-want +got):\n%s", diff)
	}
	// The second request carries the tool result.
	if got := m.Requests()[1].Messages; len(got) != 3 || got[2].Role != model.RoleTool {
		t.Fatalf("second request messages: %+v", got)
	}
}

// TestRunConcurrentCallsKeepOrder proves the two calls of one turn run at the
// same time (each waits until both have started) and that results keep call
// order even when the second finishes first.
func TestRunConcurrentCallsKeepOrder(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	firstMayFinish := make(chan struct{})
	slow := &agent.Tool{Name: "slow", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
		started.Done()
		started.Wait()
		<-firstMayFinish
		return "slow result", nil
	}}
	fast := &agent.Tool{Name: "fast", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
		started.Done()
		started.Wait()
		close(firstMayFinish) // finish after releasing the other: fast ends first
		return "fast result", nil
	}}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("a", "slow", nil), scripted.Call("b", "fast", nil)}},
		scripted.Turn{Text: "ok"},
	)
	var names []string
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("go"), Tools: tools(t, slow, fast),
		OnStep: func(ev agent.StepEvent) { names = append(names, ev.ToolName+"="+ev.Output) }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"slow=slow result", "fast=fast result"}, names); diff != "" {
		t.Fatalf("order (-want +got):\n%s", diff)
	}
	if res.Messages[2].ToolCallID != "a" || res.Messages[3].ToolCallID != "b" {
		t.Fatalf("tool messages out of order: %+v", res.Messages[2:4])
	}
}

// TestRunFailuresAreFedBack checks that each kind of tool failure becomes an
// error result the model sees, and that the run goes on to an answer.
func TestRunFailuresAreFedBack(t *testing.T) {
	failing := &agent.Tool{Name: "failing", Execute: func(context.Context, json.RawMessage) (any, error) {
		return nil, errors.New("backend is down")
	}}
	panicking := &agent.Tool{Name: "panicking", Execute: func(context.Context, json.RawMessage) (any, error) {
		panic("boom")
	}}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{
			scripted.Call("1", "nosuch", `{}`),
			scripted.Call("2", "echo", `{"text":"far too long for the schema"}`),
			scripted.Call("3", "echo", `[1,2]`),
			scripted.Call("4", "failing", nil),
			scripted.Call("5", "panicking", nil),
		}},
		scripted.Turn{Text: "sorry"},
	)
	var events []agent.StepEvent
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), Tools: tools(t, echoTool(), failing, panicking),
		OnStep: func(ev agent.StepEvent) { events = append(events, ev) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "sorry" {
		t.Fatalf("final text %q", res.Text)
	}
	wantErr := []string{
		`unknown tool "nosuch"`,
		"invalid arguments for echo",
		"arguments must be a JSON object, got an array",
		"backend is down",
		"tool panicking failed unexpectedly (panic: boom)",
	}
	if len(events) != len(wantErr) {
		t.Fatalf("%d events, want %d", len(events), len(wantErr))
	}
	for i, ev := range events {
		if ev.Err == nil || !strings.Contains(ev.Err.Error(), wantErr[i]) {
			t.Errorf("event %d (%s): err %v, want it to contain %q", i, ev.ToolName, ev.Err, wantErr[i])
		}
		if ev.Output != "" {
			t.Errorf("event %d has output %q beside its error", i, ev.Output)
		}
		msg := res.Messages[2+i]
		var body struct{ Error string }
		if err := json.Unmarshal([]byte(msg.Content), &body); err != nil || !strings.Contains(body.Error, wantErr[i]) {
			t.Errorf("tool message %d = %q, want an error object containing %q", i, msg.Content, wantErr[i])
		}
	}
	if !errors.Is(events[0].Err, agent.ErrToolNotFound) {
		t.Errorf("unknown tool error does not wrap ErrToolNotFound: %v", events[0].Err)
	}
	var ae *agent.ArgsError
	if !errors.As(events[1].Err, &ae) || ae.Tool != "echo" {
		t.Errorf("schema failure is not an ArgsError: %v", events[1].Err)
	}
	var pe *agent.PanicError
	if !errors.As(events[4].Err, &pe) || len(pe.Stack) == 0 {
		t.Errorf("panic is not a PanicError with a stack: %v", events[4].Err)
	}
}

func TestRunMaxSteps(t *testing.T) {
	loop := scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "echo", `{"text":"again"}`)}}
	m := scripted.New(loop, loop, loop, loop)
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), Tools: tools(t, echoTool()), MaxSteps: 3})
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v, want ErrMaxSteps", err)
	}
	var mse *agent.MaxStepsError
	if !errors.As(err, &mse) || mse.Steps != 3 {
		t.Fatalf("err = %#v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "did not converge within 3 tool rounds") || !strings.Contains(msg, "rephras") || strings.Contains(msg, "config") {
		t.Fatalf("user-facing message %q", msg)
	}
	if res.Steps != 3 || m.Remaining() != 0 {
		t.Fatalf("steps %d, remaining turns %d", res.Steps, m.Remaining())
	}
}

func TestRunDefaultMaxSteps(t *testing.T) {
	loop := scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "echo", `{"text":"again"}`)}}
	m := scripted.New(loop)
	m.Loop = true
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), Tools: tools(t, echoTool())})
	if !errors.Is(err, agent.ErrMaxSteps) || res.Steps != agent.DefaultMaxSteps {
		t.Fatalf("err %v after %d steps", err, res.Steps)
	}
}

func TestRunCancelStopsHangingTool(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	toolSawCancel := make(chan struct{})
	hang := &agent.Tool{Name: "hang", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
		cancel() // the user presses Ctrl-C while the tool runs
		<-ctx.Done()
		close(toolSawCancel)
		return nil, ctx.Err()
	}}
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "hang", nil)}}, scripted.Turn{Text: "never"})
	_, err := agent.Run(ctx, agent.Options{Model: m, Messages: user("x"), Tools: tools(t, hang)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	<-toolSawCancel
	if m.Remaining() != 1 {
		t.Fatal("the model was asked again after cancellation")
	}
}

// TestRunCancelAbandonsToolThatIgnoresContext shows that a tool that never
// looks at its context cannot hold the run hostage.
func TestRunCancelAbandonsToolThatIgnoresContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	stubborn := &agent.Tool{Name: "stubborn", Execute: func(context.Context, json.RawMessage) (any, error) {
		cancel()
		<-release
		return "late", nil
	}}
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "stubborn", nil)}})
	if _, err := agent.Run(ctx, agent.Options{Model: m, Messages: user("x"), Tools: tools(t, stubborn)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestRunStreamsText(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "streamed answer"})
	var got strings.Builder
	res, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), OnText: func(d string) { got.WriteString(d) }})
	if err != nil || got.String() != "streamed answer" || res.Text != "streamed answer" {
		t.Fatalf("streamed %q, result %+v, err %v", got.String(), res, err)
	}
}

// TestRunStreamsToolCallPieces: OnToolCallDelta alone makes the loop
// stream, and the pieces of a call arrive before the observer hears the
// call start.
func TestRunStreamsToolCallPieces(t *testing.T) {
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "echo", `{"text":"a"}`)}, Piece: 4}, scripted.Turn{Text: "fin"})
	rec := &recorder{}
	_, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), Tools: tools(t, echoTool()), Observer: rec,
		OnToolCallDelta: func(d model.ToolCallDelta) { rec.lines = append(rec.lines, "piece "+d.ID+" "+d.Arguments) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"think", `piece c {"te`, `piece c xt":`, `piece c "a"}`, "act echo", "observe echo", "think", "done fin"}
	if !slices.Equal(rec.lines, want) {
		t.Errorf("sequence %q, want %q", rec.lines, want)
	}
}

func TestRunModelErrorEndsRun(t *testing.T) {
	m := scripted.New(scripted.Turn{Err: errors.New("provider said no")})
	_, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x")})
	if err == nil || err.Error() != "provider said no" {
		t.Fatalf("err = %v", err)
	}
}

type recorder struct{ lines []string }

func (r *recorder) Think(step, msgs, tools int) { r.lines = append(r.lines, "think") }
func (r *recorder) Act(step int, calls []model.ToolCall) {
	r.lines = append(r.lines, "act "+calls[0].Name)
}
func (r *recorder) Observe(ev agent.StepEvent) { r.lines = append(r.lines, "observe "+ev.ToolName) }
func (r *recorder) Done(res *agent.Result, err error) {
	r.lines = append(r.lines, "done "+res.Text)
}

func TestRunObserverSequence(t *testing.T) {
	m := scripted.New(scripted.Turn{Calls: []model.ToolCall{scripted.Call("c", "echo", `{"text":"a"}`)}}, scripted.Turn{Text: "fin"})
	rec := &recorder{}
	if _, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("x"), Tools: tools(t, echoTool()), Observer: rec}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"think", "act echo", "observe echo", "think", "done fin"}, rec.lines); diff != "" {
		t.Fatalf("observer (-want +got):\n%s", diff)
	}
}

func TestToolSetRejectsDuplicates(t *testing.T) {
	if _, err := agent.NewToolSet(echoTool(), echoTool()); err == nil || !strings.Contains(err.Error(), `duplicate tool name "echo"`) {
		t.Fatalf("err = %v", err)
	}
	s := tools(t, echoTool())
	if got, ok := s.Get("echo"); !ok || got.Name != "echo" {
		t.Fatal("Get failed")
	}
	if diff := cmp.Diff([]string{"echo"}, s.Names(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatal(diff)
	}
}

func TestCheckArgs(t *testing.T) {
	tool := echoTool()
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{"text":"hi"}`, true},
		{`{"text":"01234567890"}`, false},
		{`{"text":1}`, false},
		{`{}`, false},
		{`{"text":"a","extra":1}`, false},
		{`"text"`, false},
		{`not json`, false},
	} {
		err := tool.CheckArgs(json.RawMessage(tc.args))
		if (err == nil) != tc.ok {
			t.Errorf("CheckArgs(%s) = %v, want ok=%v", tc.args, err, tc.ok)
		}
	}
	noSchema := &agent.Tool{Name: "free", Execute: echoTool().Execute}
	if err := noSchema.CheckArgs(nil); err != nil {
		t.Errorf("absent args with no schema: %v", err)
	}
	bad := &agent.Tool{Name: "bad", InputSchema: json.RawMessage(`{"type":7}`)}
	if err := bad.CheckArgs(nil); err == nil || !strings.Contains(err.Error(), "invalid input schema") {
		t.Errorf("bad schema: %v", err)
	}
}

func TestArgsErrorIsBounded(t *testing.T) {
	long := strings.Repeat("长", 5000)
	err := echoTool().CheckArgs(json.RawMessage(`{"text":"` + long + `"}`))
	if err == nil {
		t.Fatal("want an error for an over-long value")
	}
	if n := len([]rune(err.Error())); n > 500 || !strings.Contains(err.Error(), "characters in all") {
		t.Fatalf("error is %d runes: %.200s", n, err.Error())
	}
}

// TestRunToolSeesItsCallID checks that each call's Execute can tell which
// of the model's calls it runs (what a task's status reports are tied to).
func TestRunToolSeesItsCallID(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	who := &agent.Tool{Name: "who", Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
		mu.Lock()
		seen[string(args)] = agent.CallIDFrom(ctx)
		mu.Unlock()
		return "ok", nil
	}}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("call-1", "who", map[string]any{"n": 1}), scripted.Call("call-2", "who", map[string]any{"n": 2})}},
		scripted.Turn{Text: "done"},
	)
	if _, err := agent.Run(context.Background(), agent.Options{Model: m, Messages: user("go"), Tools: tools(t, who)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{`{"n":1}`: "call-1", `{"n":2}`: "call-2"}, seen); diff != "" {
		t.Fatalf("call ids seen by Execute (-want +got):\n%s", diff)
	}
	if got := agent.CallIDFrom(context.Background()); got != "" {
		t.Fatalf("CallIDFrom outside a call = %q, want empty", got)
	}
}
