package otlp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/telemetry"
	"github.com/agentapp/agentapp/telemetry/otlp"
	"github.com/agentapp/agentapp/telemetry/otlp/otlptest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// TestOffWithoutVariables: with no exporter variable (or one that turns
// tracing off) Setup makes nothing, Tracing is nil, and nothing reaches a
// receiver that a stray variable names.
func TestOffWithoutVariables(t *testing.T) {
	rcv := otlptest.Start(t)
	for name, env := range map[string]map[string]string{
		"none":              {},
		"service name only": {"OTEL_SERVICE_NAME": "x", "OTEL_RESOURCE_ATTRIBUTES": "a=b"},
		"sdk disabled":      {"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_SDK_DISABLED": "true"},
		"exporter none":     {"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_TRACES_EXPORTER": "none"},
	} {
		t.Run(name, func(t *testing.T) {
			if otlp.Enabled(lookup(env)) {
				t.Fatal("Enabled = true")
			}
			p, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: lookup(env)})
			if err != nil {
				t.Fatal(err)
			}
			tr := p.Tracing()
			if tr != nil {
				t.Fatal("Tracing is not nil")
			}
			ctx, sp := tr.StartTurn(context.Background(), "s", "chat")
			if sp != nil || telemetry.Enabled(ctx) || trace.SpanContextFromContext(ctx).IsValid() {
				t.Fatal("a nil Tracing started a span")
			}
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := rcv.Requests(); n != 0 {
		t.Fatalf("the receiver got %d requests", n)
	}
}

// TestConfigErrors: variables that cannot be used are refused with the
// variable's name.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "http/json"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "-tags otlpgrpc"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "sometimes"}, "OTEL_TRACES_SAMPLER"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "OTEL_TRACES_SAMPLER_ARG"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, "OTEL_RESOURCE_ATTRIBUTES"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "OTEL_EXPORTER_OTLP_TIMEOUT"},
		// Issue 43, item 5: headers no request can carry.
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=abc%0D%0AX-Injected: 1"}, `OTEL_EXPORTER_OTLP_HEADERS: the value of header "x-api-key" has a control character`},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "a=b%0A"}, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_HEADERS": "bad name=1"}, `OTEL_EXPORTER_OTLP_HEADERS: "bad name" is not a header name`},
	} {
		_, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: lookup(tc.env)})
		if !errors.Is(err, otlp.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want ErrConfig naming %s", tc.env, err, tc.want)
		}
		// This build has no gRPC exporter: no error suggests it.
		if tc.env["OTEL_EXPORTER_OTLP_PROTOCOL"] == "http/json" && strings.Contains(err.Error(), "or grpc") {
			t.Errorf("%v: error %v suggests grpc, which this build lacks", tc.env, err)
		}
	}
}

// TestExportsToReceiver: spans go to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces
// as protobuf that the official definitions decode, with the resource
// (service, version, pid, OTEL_RESOURCE_ATTRIBUTES), kinds, parents,
// attributes of every type, events and status; gzip when asked.
func TestExportsToReceiver(t *testing.T) {
	for _, compression := range []string{"", "gzip"} {
		t.Run("compression="+compression, func(t *testing.T) {
			rcv := otlptest.Start(t)
			env := map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT":    rcv.URL,
				"OTEL_SERVICE_NAME":              "svc-test",
				"OTEL_RESOURCE_ATTRIBUTES":       "deployment.environment=test,team=a%20b",
				"OTEL_EXPORTER_OTLP_COMPRESSION": compression,
				"OTEL_EXPORTER_OTLP_HEADERS":     "x-check=1",
			}
			p, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: lookup(env), ServiceVersion: "v9"})
			if err != nil {
				t.Fatal(err)
			}
			tr := p.Tracing()
			ctx, turn := tr.StartTurn(context.Background(), "sess-1", "chat")
			_, tool := telemetry.StartToolCall(ctx, "lookup", "call-1", "srv", []byte(`{"a":1}`))
			tool.SetAttributes(attribute.Bool("b", true), attribute.Float64("f", 1.5), attribute.Int64Slice("is", []int64{1, -2}),
				attribute.StringSlice("ss", []string{"x", "y"}), attribute.BoolSlice("bs", []bool{true}), attribute.Float64Slice("fs", []float64{2.5}))
			tool.AddEvent("guard.decision", attribute.String("k", "v"))
			tool.EndToolCall("", errors.New("boom"))
			turn.End()
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := rcv.WaitFor(t, 10*time.Second, "2 spans", func(s []otlptest.Span) bool { return len(s) == 2 })
			var ts, ps otlptest.Span
			for _, s := range spans {
				switch s.Name {
				case "execute_tool lookup":
					ts = s
				case "invoke_agent agentapp":
					ps = s
				}
			}
			if ts.Span == nil || ps.Span == nil {
				t.Fatalf("spans %v", spans)
			}
			if ts.TraceID() != ps.TraceID() || ts.ParentID() != ps.SpanID() || ps.ParentID() != "" {
				t.Errorf("tool span trace %s parent %s; turn trace %s id %s parent %q", ts.TraceID(), ts.ParentID(), ps.TraceID(), ps.SpanID(), ps.ParentID())
			}
			want := map[string]string{
				"service.name": "svc-test", "service.version": "v9", "process.pid": strconv.Itoa(os.Getpid()),
				"deployment.environment": "test", "team": "a b",
			}
			for k, v := range want {
				if ts.Resource[k] != v {
					t.Errorf("resource %s = %q, want %q (all: %v)", k, ts.Resource[k], v, ts.Resource)
				}
			}
			for k, v := range map[string]string{
				"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call-1",
				"agentapp.tool.server": "srv", "agentapp.tool.outcome": "error", "error.type": "*errors.errorString",
				"b": "true", "f": "1.5", "is": "1,-2", "ss": "x,y", "bs": "true", "fs": "2.5",
			} {
				if got, _ := ts.Attr(k); got != v {
					t.Errorf("tool span %s = %q, want %q", k, got, v)
				}
			}
			if _, ok := ts.Attr("gen_ai.tool.call.arguments"); ok {
				t.Error("arguments recorded without RecordContent")
			}
			if ts.Kind != tracepb.Span_SPAN_KIND_INTERNAL || ts.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || ts.Status.GetMessage() != "boom" {
				t.Errorf("kind %v status %v", ts.Kind, ts.Status)
			}
			if len(ts.Events) < 1 || ts.Events[0].Name != "guard.decision" {
				t.Errorf("events %v", ts.Events)
			}
			if ts.StartTimeUnixNano == 0 || ts.EndTimeUnixNano < ts.StartTimeUnixNano {
				t.Errorf("times %d..%d", ts.StartTimeUnixNano, ts.EndTimeUnixNano)
			}
			if ts.Flags&0x1 == 0 {
				t.Errorf("flags %#x: not sampled", ts.Flags)
			}
		})
	}
}

// TestShutdownBounded: a collector that never answers does not hold
// Shutdown past its context's deadline.
func TestShutdownBounded(t *testing.T) {
	block := make(chan struct{})
	srv := hangingServer(t, block)
	p, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: lookup(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv})})
	if err != nil {
		t.Fatal(err)
	}
	_, sp := p.Tracing().StartTurn(context.Background(), "s", "chat")
	sp.End()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Shutdown(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Shutdown reported success though the collector never answered")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Shutdown did not return within 20s of a 300ms deadline")
	}
	close(block)
}

// TestRetriesUnavailable: a collector that answers 503 once gets the
// batch again, and it arrives.
func TestRetriesUnavailable(t *testing.T) {
	rcv := otlptest.Start(t)
	var mu sync.Mutex
	refused := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := refused == 0
		if first {
			refused++
		}
		mu.Unlock()
		if first {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		rcv.ServeHTTP(w, r)
	}))
	defer srv.Close()
	p, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: lookup(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL})})
	if err != nil {
		t.Fatal(err)
	}
	_, sp := p.Tracing().StartTurn(context.Background(), "s", "chat")
	sp.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.Spans()); n != 1 || refused != 1 {
		t.Fatalf("%d spans after %d refusals, want 1 after 1", n, refused)
	}
}
