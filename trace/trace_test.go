package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// stepClock returns a clock that moves 2 ms forward on every reading, so
// elapsed times in the lines are stable and visibly increase.
func stepClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(2 * time.Millisecond)
		return t
	}
}

func echoTool() *agent.Tool {
	return &agent.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Validate:    true,
		Execute: func(_ context.Context, args json.RawMessage) (any, error) {
			var a struct{ Text string }
			if err := json.Unmarshal(args, &a); err != nil {
				return nil, err
			}
			if a.Text == "fail" {
				return nil, errors.New("echo refuses to fail\nsilently")
			}
			return a.Text, nil
		},
	}
}

func TestScriptedRunLines(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Text: "let me check", Calls: []model.ToolCall{
			scripted.Call("c1", "echo", `{ "text" : "你好\n世界" }`),
			scripted.Call("c2", "missing", nil),
		}},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c3", "echo", map[string]string{"text": "fail"})}},
		scripted.Turn{Text: "all done\nbye"},
	)
	var buf bytes.Buffer
	tr := New(&buf, WithClock(stepClock()))
	res, err := agent.Run(context.Background(), agent.Options{
		Model:    m,
		Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools:    agent.MustToolSet(echoTool()),
		Observer: tr,
	})
	if err != nil || res.Text != "all done\nbye" {
		t.Fatalf("Run = %v, %v", res, err)
	}
	want := `[trace] step 1 +0ms think: messages=1 tools=1
[trace] step 1 +2ms act: echo {"text":"你好\n世界"} | missing {}
[trace] step 1 +4ms observe ok: echo -> 你好\n世界
[trace] step 1 +6ms observe error: missing -> unknown tool "missing"; available tools: [echo]
[trace] step 2 +8ms think: messages=4 tools=1
[trace] step 2 +10ms act: echo {"text":"fail"}
[trace] step 2 +12ms observe error: echo -> echo refuses to fail\nsilently
[trace] step 3 +14ms think: messages=6 tools=1
[trace] step 3 +16ms done: steps=2 answer: all done\nbye
`
	if got := buf.String(); got != want {
		t.Errorf("trace lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestDoneWithError(t *testing.T) {
	call := scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "echo", `{"text":"x"}`)}}
	var buf bytes.Buffer
	_, err := agent.Run(context.Background(), agent.Options{
		Model:    scripted.New(call, call),
		Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools:    agent.MustToolSet(echoTool()),
		MaxSteps: 1,
		Observer: New(&buf, WithClock(stepClock()), WithPreview(40)),
	})
	if !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v, want ErrMaxSteps", err)
	}
	want := `[trace] step 1 +0ms think: messages=1 tools=1
[trace] step 1 +2ms act: echo {"text":"x"}
[trace] step 1 +4ms observe ok: echo -> x
[trace] step 2 +6ms think: messages=3 tools=1
[trace] step 2 +8ms done error: steps=1 error: ` + textsafe.Preview(err.Error(), 40) + "\n"
	if got := buf.String(); got != want {
		t.Errorf("trace lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestDoneWithoutResult(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, WithClock(stepClock())).Done(nil, errors.New("agent.Run: no model"))
	if got, want := buf.String(), "[trace] step 0 +0ms done error: steps=0 error: agent.Run: no model\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestElapsedRestartsWithEachRun(t *testing.T) {
	var buf bytes.Buffer
	tr := New(&buf, WithClock(stepClock()))
	for range 2 {
		tr.Think(1, 1, 0)
		tr.Done(&agent.Result{Text: "ok"}, nil)
	}
	want := "[trace] step 1 +0ms think: messages=1 tools=0\n[trace] step 1 +2ms done: steps=0 answer: ok\n"
	if got := buf.String(); got != want+want {
		t.Errorf("got:\n%s\nwant each run from +0ms:\n%s%s", got, want, want)
	}
}

// TestDefaultPreview: without WithPreview a value is cut at
// DefaultPreview characters (the cutting itself is textsafe.Preview's).
func TestDefaultPreview(t *testing.T) {
	var buf bytes.Buffer
	New(&buf, WithClock(stepClock())).Observe(agent.StepEvent{Step: 1, ToolName: "t", Output: strings.Repeat("字", 500)})
	want := "[trace] step 1 +0ms observe ok: t -> " + strings.Repeat("字", DefaultPreview) + "…(+380 chars, 500 total)\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestHostileTextIsEscaped: a tool name, arguments, a result and an answer
// holding bidirectional overrides or isolates and a terminal escape reach
// the trace escaped. Before, the trace escaped only control characters, so
// a server's U+202E reversed the rest of the user's trace line.
func TestHostileTextIsEscaped(t *testing.T) {
	name := "refund\u202egnp"
	tool := &agent.Tool{
		Name:   name,
		Origin: "hostile",
		Execute: func(context.Context, json.RawMessage) (any, error) {
			return "ok\u2066\x1b[2J\u2069", nil
		},
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", name, `{"note":"x`+"\u202e"+`y"}`)}},
		scripted.Turn{Text: "done\u202e"},
	)
	var buf bytes.Buffer
	_, err := agent.Run(context.Background(), agent.Options{
		Model:    m,
		Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools:    agent.MustToolSet(tool),
		Observer: New(&buf, WithClock(stepClock())),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[trace] step 1 +0ms think: messages=1 tools=1
[trace] step 1 +2ms act: refund\u202egnp {"note":"x\u202ey"}
[trace] step 1 +4ms observe ok: refund\u202egnp -> ok\u2066\x1b[2J\u2069
[trace] step 2 +6ms think: messages=3 tools=1
[trace] step 2 +8ms done: steps=1 answer: done\u202e
`
	if got := buf.String(); got != want {
		t.Errorf("trace lines:\n%s\nwant:\n%s", got, want)
	}
	if strings.ContainsAny(buf.String(), "\u202e\u2066\u2069\x1b") {
		t.Errorf("raw override or escape in the trace: %q", buf.String())
	}
}

func TestPreviewLengthOption(t *testing.T) {
	var buf bytes.Buffer
	tr := New(&buf, WithPreview(3), WithClock(stepClock()))
	tr.Observe(agent.StepEvent{Step: 1, ToolName: "searchKnowledgeBase", Output: "住宿标准每晚600元"})
	want := "[trace] step 1 +0ms observe ok: searchKnowledgeBase -> 住宿标…(+7 chars, 10 total)\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestLabel(t *testing.T) {
	var buf bytes.Buffer
	tr := New(&buf, WithLabel("session=s-1\x1b[2J"), WithClock(stepClock()))
	tr.Think(1, 2, 3)
	tr.Done(&agent.Result{Steps: 0, Text: "ok"}, nil)
	want := "[trace] session=s-1\\x1b[2J step 1 +0ms think: messages=2 tools=3\n" +
		"[trace] session=s-1\\x1b[2J step 1 +2ms done: steps=0 answer: ok\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	buf.Reset()
	New(&buf, WithLabel(""), WithClock(stepClock())).Think(1, 0, 0)
	if got, want := buf.String(), "[trace] step 1 +0ms think: messages=0 tools=0\n"; got != want {
		t.Errorf("empty label: got %q, want %q", got, want)
	}
}

func TestEnabled(t *testing.T) {
	tests := []struct {
		env  string
		flag bool
		want bool
	}{
		{"", false, false},
		{"", true, true},
		{"1", false, true},
		{"true", false, true},
		{"TRUE", false, true},
		{" yes ", false, true},
		{"Yes", false, true},
		{"0", false, false},
		{"false", false, false},
		{"no", false, false},
		{"2", false, false},
		{"0", true, true},
	}
	for _, tt := range tests {
		getenv := func(k string) string {
			if k == "AGENT_TRACE" {
				return tt.env
			}
			return ""
		}
		if got := Enabled(tt.flag, getenv); got != tt.want {
			t.Errorf("AGENT_TRACE=%q, flag %v: Enabled = %v, want %v", tt.env, tt.flag, got, tt.want)
		}
	}
	// Only getenv is read, never the process environment.
	t.Setenv("AGENT_TRACE", "1")
	if Enabled(false, nil) || Enabled(false, func(string) string { return "" }) {
		t.Error("Enabled read AGENT_TRACE from the process environment instead of getenv")
	}
}

// TestConcurrentWritesKeepLinesWhole runs many writers at once; with -race
// it also checks the tracer's locking.
func TestConcurrentWritesKeepLinesWhole(t *testing.T) {
	var buf bytes.Buffer
	tr := New(&buf)
	var wg sync.WaitGroup
	const writers, each = 8, 50
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				tr.Observe(agent.StepEvent{Step: w, ToolName: "t", Output: strings.Repeat("x", i)})
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("got %d lines, want %d", len(lines), writers*each)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, Prefix+" step ") || !strings.Contains(l, " observe ok: t -> ") {
			t.Fatalf("garbled line %q", l)
		}
	}
}
