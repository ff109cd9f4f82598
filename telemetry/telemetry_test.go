package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentapp/agentapp/telemetry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func recorder(t *testing.T, opts *telemetry.Options) (*telemetry.Tracing, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return telemetry.New(tp, opts), rec
}

func attrs(sp sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range sp.Attributes() {
		m[string(kv.Key)] = kv.Value.Emit()
	}
	return m
}

// TestOffAllocatesNothing: without a trace in the context, the helpers
// the hot paths call allocate nothing and start nothing.
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	args := []byte(`{}`)
	n := testing.AllocsPerRun(100, func() {
		c, sp := telemetry.StartToolCall(ctx, "t", "id", "srv", args)
		sp.EndToolCall("out", nil)
		c, sp = telemetry.StartMCPClient(c, "tools/call", "t", "srv", "pipe")
		sp.EndMCP(nil, 0, false)
		c, sp = telemetry.StartSearch(c, "q", 3)
		sp.EndSearch(1, nil)
		c, sp = telemetry.StartModelCall(c, "m", 0)
		sp.EndModelCall(1, 2, "stop", nil)
		telemetry.GuardDecision(c, "allowlist", telemetry.GuardDenied, "x")
		var tr *telemetry.Tracing
		_, sp = tr.StartMCPServerStrings(c, "tools/call", "t", "s", "pipe", nil, nil)
		sp.End()
		if telemetry.Enabled(c) || c != ctx {
			panic("a span was started")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per run with tracing off", n)
	}
}

// TestMetaRoundTrip: the trace context written into a request's _meta is
// the one read back on the other side, next to what _meta held.
func TestMetaRoundTrip(t *testing.T) {
	tr, _ := recorder(t, nil)
	ctx, sp := tr.StartTurn(context.Background(), "s", "chat")
	defer sp.End()
	meta := telemetry.InjectMeta(ctx, map[string]any{"progressToken": "p"})
	if meta["progressToken"] != "p" || meta[telemetry.MetaTraceparent] == nil {
		t.Fatalf("meta %v", meta)
	}
	got := trace.SpanContextFromContext(telemetry.ExtractMeta(context.Background(), meta))
	if got.TraceID() != sp.SpanContext().TraceID() || got.SpanID() != sp.SpanContext().SpanID() || !got.IsRemote() {
		t.Fatalf("extracted %v, want %v", got, sp.SpanContext())
	}
	if m := telemetry.InjectMeta(context.Background(), nil); m != nil {
		t.Fatalf("an untraced context wrote %v", m)
	}
}

// TestHandlerContinuesHeader: the HTTP middleware the web uses continues
// an incoming traceparent, and the turn started under it joins the trace.
func TestHandlerContinuesHeader(t *testing.T) {
	tr, rec := recorder(t, nil)
	h := tr.Handler("/api/chat", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, sp := tr.StartTurn(r.Context(), "s", "web")
		sp.End()
		w.WriteHeader(http.StatusTeapot)
	}))
	req := httptest.NewRequest("POST", "/api/chat", nil)
	req.Header.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.ServeHTTP(httptest.NewRecorder(), req)
	var server, turn sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		switch sp.Name() {
		case "POST /api/chat":
			server = sp
		case "invoke_agent agentapp":
			turn = sp
		}
	}
	if server == nil || turn == nil {
		t.Fatalf("spans %v", rec.Ended())
	}
	if server.Parent().SpanID().String() != "00f067aa0ba902b7" || server.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("server span parent %s trace %s", server.Parent().SpanID(), server.SpanContext().TraceID())
	}
	if turn.Parent().SpanID() != server.SpanContext().SpanID() {
		t.Errorf("turn's parent %s, want the request's span", turn.Parent().SpanID())
	}
	if a := attrs(server); a["http.response.status_code"] != "418" || a["gen_ai.conversation.id"] != "" {
		t.Errorf("server attributes %v", a)
	}
	var nilTr *telemetry.Tracing
	inner := http.NotFoundHandler()
	if got := nilTr.Handler("/x", inner); got == nil {
		t.Error("a nil Tracing's Handler is nil")
	}
}

// TestGuardAndContent: a guard's refusal makes the tool call's outcome
// denied, with the decision as an event; the approval span records the
// answer and the wait; content is recorded only when asked for.
func TestGuardAndContent(t *testing.T) {
	for _, content := range []bool{false, true} {
		tr, rec := recorder(t, &telemetry.Options{RecordContent: content})
		ctx, turn := tr.StartTurn(context.Background(), "s", "chat")
		tctx, tool := telemetry.StartToolCall(ctx, "rm", "c1", "files", []byte(`{"path":"/"}`))
		actx, ap := telemetry.StartApproval(tctx, "rm", "files")
		if !telemetry.Enabled(actx) {
			t.Fatal("approval context not traced")
		}
		ap.EndApproval(false, "the user said no", 1500*time.Millisecond)
		telemetry.GuardDecision(tctx, "confirm", telemetry.GuardRefused, "the user said no")
		tool.EndToolCall(`{"denied":true}`, nil)
		_, search := telemetry.StartSearch(ctx, "secret query", 5)
		search.EndSearch(2, nil)
		_, failed := telemetry.StartToolCall(ctx, "x", "c2", "", nil)
		failed.EndToolCall("", context.DeadlineExceeded)
		turn.End()
		got := map[string]sdktrace.ReadOnlySpan{}
		for _, sp := range rec.Ended() {
			got[sp.Name()] = sp
		}
		ta := attrs(got["execute_tool rm"])
		if ta["agentapp.tool.outcome"] != "denied" || len(got["execute_tool rm"].Events()) != 1 {
			t.Errorf("tool span %v events %v", ta, got["execute_tool rm"].Events())
		}
		if aa := attrs(got["guard.approval rm"]); aa["agentapp.guard.decision"] != "refused" || aa["agentapp.guard.wait_ms"] != "1500" {
			t.Errorf("approval span %v", aa)
		}
		if fa := attrs(got["execute_tool x"]); fa["error.type"] != "timeout" || fa["agentapp.tool.outcome"] != "error" {
			t.Errorf("failed tool span %v", fa)
		}
		_, hasArgs := ta["gen_ai.tool.call.arguments"]
		_, hasResult := ta["gen_ai.tool.call.result"]
		_, hasQuery := attrs(got["kb.search"])["agentapp.kb.query"]
		if hasArgs != content || hasResult != content || hasQuery != content {
			t.Errorf("content %v: arguments %v result %v query %v", content, hasArgs, hasResult, hasQuery)
		}
	}
}
