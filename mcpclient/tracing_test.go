package mcpclient

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestTracingSDKPath: on the SDK's path (here in memory) a request sent
// with a traced context gets a client span, and the server, tracing too,
// continues it from the request's _meta; a request without a trace
// carries none, so the server's span starts a trace of its own.
func TestTracingSDKPath(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tr := telemetry.New(tp, nil)
	echo := &agent.Tool{
		Name: "echo", Description: "Echoes.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ok", nil },
	}
	srv := mcpserver.New(&mcpserver.Options{Tools: []*agent.Tool{echo}, Tracing: tr})
	ctx := context.Background()
	b, err := ConnectInMemory(ctx, "mem", srv)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	tctx, root := tr.Start(ctx, "root", trace.SpanKindInternal)
	if _, err := b.CallTool(tctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	root.End()
	if _, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}

	var client, servers []sdktrace.ReadOnlySpan
	for _, sp := range rec.Ended() {
		if sp.Name() != "tools/call echo" {
			continue
		}
		switch sp.SpanKind() {
		case trace.SpanKindClient:
			client = append(client, sp)
		case trace.SpanKindServer:
			servers = append(servers, sp)
		}
	}
	if len(client) != 1 || len(servers) != 2 {
		t.Fatalf("%d client and %d server tools/call spans, want 1 and 2", len(client), len(servers))
	}
	c := client[0]
	if c.Parent().SpanID() != root.SpanContext().SpanID() {
		t.Errorf("client span's parent %s, want the root %s", c.Parent().SpanID(), root.SpanContext().SpanID())
	}
	linked, alone := 0, 0
	for _, s := range servers {
		switch {
		case s.Parent().SpanID() == c.SpanContext().SpanID() && s.SpanContext().TraceID() == c.SpanContext().TraceID():
			linked++
		case !s.Parent().IsValid():
			alone++
		}
	}
	if linked != 1 || alone != 1 {
		t.Errorf("server spans: %d children of the client's, %d roots; want 1 and 1", linked, alone)
	}
}
