package mcpserver

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// tracedLineSession is newLineSession's server with tr as its Tracing.
func tracedLineSession(t *testing.T, tr *telemetry.Tracing) (*lineSession, *Server) {
	t.Helper()
	srv := New(&Options{Version: "test", Tools: []*agent.Tool{echoLenTool}, Tracing: tr})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), srv.NewIOTransport(inR, outW), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &lineSession{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), ss: ss}
	t.Cleanup(func() {
		inW.Close()
		outR.Close()
		ss.Wait()
	})
	return s, srv
}

const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + parentTrace + "-" + parentSpan + "-01"
)

// TestTracingContinuesClientTrace: with Tracing set, a tools/call whose
// _meta carries a traceparent (SEP-414) is answered on the direct path
// inside a server span that is the child of the client's span; one whose
// _meta also holds a progress token goes to the SDK's path and is traced
// there just the same; the tool's outcome is on the span.
func TestTracingContinuesClientTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	s, srv := tracedLineSession(t, telemetry.New(tp, nil))
	s.handshake()

	s.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":"abc"},"_meta":{"traceparent":"` + traceparent + `","tracestate":"k=v"}}}` + "\n")
	wantBytes(t, s.next(), 1, 3)
	if got := srv.taken.Load(); got != 1 {
		t.Fatalf("direct path took %d calls, want 1", got)
	}
	s.write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":"abcd"},"_meta":{"progressToken":"p","traceparent":"` + traceparent + `"}}}` + "\n")
	wantBytes(t, s.next(), 2, 4)
	s.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":7},"_meta":{"traceparent":"` + traceparent + `"}}}` + "\n")
	if r := s.next(); r["result"] == nil {
		t.Fatalf("schema error answer %v", r)
	}
	if got := srv.taken.Load(); got != 2 {
		t.Fatalf("direct path took %d calls, want 2 (the one with a progress token goes to the SDK)", got)
	}

	var calls []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() == "tools/call echoLen" {
			calls = append(calls, sp)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("%d tools/call spans, want 3", len(calls))
	}
	direct := 0
	for _, sp := range calls {
		if sp.SpanContext().TraceID().String() != parentTrace || sp.Parent().SpanID().String() != parentSpan || !sp.Parent().IsRemote() {
			t.Errorf("span %s: trace %s parent %s (remote %v), want the client's", sp.Name(), sp.SpanContext().TraceID(), sp.Parent().SpanID(), sp.Parent().IsRemote())
		}
		attrs := map[string]string{}
		for _, kv := range sp.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if attrs["mcp.method.name"] != "tools/call" || attrs["gen_ai.tool.name"] != "echoLen" || attrs["network.transport"] != "pipe" || attrs["mcp.session.id"] == "" {
			t.Errorf("attributes %v", attrs)
		}
		if attrs["agentapp.mcp.direct"] == "true" {
			direct++
			if attrs["jsonrpc.request.id"] == "" {
				t.Errorf("direct span without jsonrpc.request.id: %v", attrs)
			}
		}
		if attrs["jsonrpc.request.id"] == "3" && attrs["error.type"] != "tool_error" {
			t.Errorf("the failed call's span has error.type %q", attrs["error.type"])
		}
	}
	if direct != 2 {
		t.Errorf("%d spans from the direct path, want 2", direct)
	}
}

// TestTracingOffKeepsDirectPath: without Tracing, a call with a trace
// context in _meta goes to the SDK's path as any _meta did before, and
// nothing is traced.
func TestTracingOffKeepsDirectPath(t *testing.T) {
	s, srv := tracedLineSession(t, nil)
	s.handshake()
	s.write(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":"abc"},"_meta":{"traceparent":"` + traceparent + `"}}}` + "\n")
	wantBytes(t, s.next(), 1, 3)
	s.write(callLine(2, "ab") + "\n")
	wantBytes(t, s.next(), 2, 2)
	if got := srv.taken.Load(); got != 1 {
		t.Fatalf("direct path took %d calls, want 1 (only the plain one)", got)
	}
}

// headerTransport adds a traceparent header to every request.
type headerTransport struct{ value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("traceparent", h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTracingHTTP: over streamable HTTP the server span continues the
// trace in a request's _meta, or else the one in the HTTP request's
// traceparent header, on the direct path (httpdirect.go) as on the SDK's.
func TestTracingHTTP(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	srv := New(&Options{Version: "test", Tools: []*agent.Tool{echoLenTool}, Tracing: telemetry.New(tp, nil)})
	h := NewHTTPHandler(srv, nil)
	ts := httptest.NewServer(h)
	defer ts.Close()
	defer h.CloseSessions()
	ctx := context.Background()

	const headerSpan = "1111111111111111"
	headerParent := "00-" + parentTrace + "-" + headerSpan + "-01"
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: ts.URL + HTTPPath, HTTPClient: &http.Client{Transport: headerTransport{headerParent}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a session: the direct path serves those
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, p := range []*mcp.CallToolParams{
		{Name: "echoLen", Arguments: map[string]any{"text": "abc"}, Meta: mcp.Meta{"traceparent": traceparent}},
		{Name: "echoLen", Arguments: map[string]any{"text": "abcd"}},
	} {
		if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
	}
	if got := srv.taken.Load(); got != 2 {
		t.Errorf("the direct path took %d calls, want 2", got)
	}
	parents := map[string]bool{}
	for _, sp := range rec.Ended() {
		if sp.Name() != "tools/call echoLen" {
			continue
		}
		if sp.SpanContext().TraceID().String() != parentTrace {
			t.Errorf("span in trace %s, want %s", sp.SpanContext().TraceID(), parentTrace)
		}
		attrs := map[string]string{}
		for _, kv := range sp.Attributes() {
			attrs[string(kv.Key)] = kv.Value.Emit()
		}
		if attrs["network.transport"] != "tcp" || attrs["mcp.session.id"] != cs.ID() || attrs["agentapp.mcp.direct"] != "true" {
			t.Errorf("attributes %v, want transport tcp, session %s, direct", attrs, cs.ID())
		}
		parents[sp.Parent().SpanID().String()] = true
	}
	if !parents[parentSpan] || !parents[headerSpan] || len(parents) != 2 {
		t.Errorf("parents %v: want the _meta's %s and the header's %s", parents, parentSpan, headerSpan)
	}
}
