package guard

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/telemetry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestGuardDecisionsTraced: under a traced tool call, the allowlist's
// refusal and a confirmation (with its wait, as a guard.approval span)
// are recorded, and a refusal makes the call's outcome denied.
func TestGuardDecisionsTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := telemetry.New(tp, nil)
	fc := &fakeConfirmer{decision: Decision{Approved: true, Reason: "the user said yes"}}
	g, _ := setup(t, Config{Allowlist: []string{"ok"}, Confirm: []string{"ok"}}, fc)
	blocked := Wrap(newServerTool("blocked", "x", nil).tool, g)
	allowed := Wrap(newServerTool("ok", "fine", nil).tool, g)

	ctx, turn := tr.StartTurn(context.Background(), "s", "chat")
	for _, tool := range []string{"blocked", "ok"} {
		tctx, sp := telemetry.StartToolCall(ctx, tool, tool+"-1", "hostile", nil)
		w := blocked
		if tool == "ok" {
			w = allowed
		}
		out, err := w.Execute(tctx, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		s, _ := out.(string)
		sp.EndToolCall(s, nil)
	}
	turn.End()

	got := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		got[sp.Name()] = sp
	}
	outcome := func(name string) string {
		for _, kv := range got[name].Attributes() {
			if kv.Key == telemetry.AttrToolOutcome {
				return kv.Value.AsString()
			}
		}
		return ""
	}
	if o := outcome("execute_tool blocked"); o != "denied" {
		t.Errorf("blocked call's outcome %q, want denied", o)
	}
	if o := outcome("execute_tool ok"); o != "ok" {
		t.Errorf("approved call's outcome %q, want ok", o)
	}
	ev := got["execute_tool blocked"].Events()
	if len(ev) != 1 || ev[0].Name != "guard.decision" {
		t.Errorf("blocked call's events %v", ev)
	}
	ap := got["guard.approval ok"]
	if ap == nil || ap.Parent().SpanID() != got["execute_tool ok"].SpanContext().SpanID() {
		t.Fatalf("no approval span under the approved call: %v", got)
	}
}
