package host

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/telemetry"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// attrOf returns a recorded span's attribute as a string.
func attrOf(sp tracetest.SpanStub, key string) string {
	for _, kv := range sp.Attributes {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestRunTracesTheTurn: with a Tracing, Run starts one invoke_agent span
// per turn (session, front end, model, tokens) that is the parent of the
// loop's model and tool calls; a failed turn's span records the error.
func TestRunTracesTheTurn(t *testing.T) {
	ctx := context.Background()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)
	clock := &agent.Tool{Name: "clock", Description: "Tells the time.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "noon", nil }}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "clock", `{}`)}},
		scripted.Turn{Text: "it is noon"},
	)
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{clock}, Store: openTestStore(t), Tracing: telemetry.New(tp, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Run(ctx, Turn{Session: "s1", FrontEnd: "web", Messages: []model.Message{{Role: model.RoleUser, Content: "time?"}}}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	var turn tracetest.SpanStub
	for _, sp := range spans {
		if sp.Name == "invoke_agent agentapp" {
			turn = sp
		}
	}
	if !turn.SpanContext.IsValid() {
		t.Fatalf("no turn span among %d spans", len(spans))
	}
	for k, want := range map[string]string{"agentapp.front_end": "web", "gen_ai.conversation.id": "s1", "gen_ai.request.model": "scripted", "gen_ai.usage.input_tokens": "0"} {
		if got := attrOf(turn, k); got != want {
			t.Errorf("turn span: %s = %q, want %q", k, got, want)
		}
	}
	children := map[string]int{}
	for _, sp := range spans {
		if sp.Parent.SpanID() == turn.SpanContext.SpanID() {
			children[sp.Name]++
		}
	}
	if children["chat scripted"] != 2 || children["execute_tool clock"] != 1 {
		t.Errorf("the turn span's children: %v, want 2 model calls and 1 tool call", children)
	}

	// A turn the model fails: its span says so.
	exp.Reset()
	broken := errors.New("provider down")
	h2, err := newHost(ctx, config{Model: scripted.New(scripted.Turn{Err: broken}), Store: openTestStore(t), Tracing: telemetry.New(tp, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if _, err := h2.Run(ctx, Turn{Session: "s2", FrontEnd: "chat", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err == nil {
		t.Fatal("the turn did not fail")
	}
	for _, sp := range exp.GetSpans() {
		if sp.Name == "invoke_agent agentapp" {
			if sp.Status.Code != codes.Error || attrOf(sp, "error.type") == "" {
				t.Errorf("failed turn's span: status %v, error.type %q", sp.Status, attrOf(sp, "error.type"))
			}
			return
		}
	}
	t.Fatal("no span for the failed turn")
}
