package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/agentapp/agentapp/telemetry/otlp"
	"github.com/agentapp/agentapp/telemetry/otlp/otlptest"
)

// usageModel is a scripted model whose replies report token counts and a
// finish reason, as a provider's do.
type usageModel struct{ *scripted.Model }

func (m usageModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	resp, err := m.Model.Generate(ctx, req)
	if resp != nil {
		resp.Usage = model.Usage{InputTokens: 100 + len(req.Messages), OutputTokens: 7}
		resp.FinishReason = "stop"
		if len(resp.Message.ToolCalls) > 0 {
			resp.FinishReason = "tool_calls"
		}
	}
	return resp, err
}

// spanIndex finds spans by name.
type spanIndex []otlptest.Span

func (s spanIndex) named(name string) []otlptest.Span {
	var out []otlptest.Span
	for _, sp := range s {
		if sp.Name == name {
			out = append(out, sp)
		}
	}
	return out
}

func (s spanIndex) one(t *testing.T, name string) otlptest.Span {
	t.Helper()
	got := s.named(name)
	if len(got) != 1 {
		t.Fatalf("%d spans named %q, want 1", len(got), name)
	}
	return got[0]
}

func wantAttrs(t *testing.T, sp otlptest.Span, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got, ok := sp.Attr(k); !ok || got != v {
			t.Errorf("span %q: %s = %q (present %v), want %q", sp.Name, k, got, ok, v)
		}
	}
}

func wantChild(t *testing.T, child, parent otlptest.Span) {
	t.Helper()
	if child.TraceID() != parent.TraceID() || child.ParentID() != parent.SpanID() {
		t.Errorf("span %q (trace %s, parent %s) is not a child of %q (trace %s, id %s)",
			child.Name, child.TraceID(), child.ParentID(), parent.Name, parent.TraceID(), parent.SpanID())
	}
}

// TestTraceAcrossProcesses: one turn of the agent loop that calls a local
// tool and a tool of a second process (agentapp serve on stdio, exporting
// to the same receiver) yields one trace: turn → model calls and tool
// calls → the client's tools/call → serve's tools/call → its knowledge-base
// search, linked by parent id across the two processes, with the GenAI
// and MCP attributes and each process's resource.
func TestTraceAcrossProcesses(t *testing.T) {
	bin := agentappBin(t)
	rcv := otlptest.Start(t)
	ctx := context.Background()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL, "OTEL_SERVICE_NAME": "agentapp-test-host"}
	p, err := otlp.Setup(ctx, &otlp.Options{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, ServiceVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(ctx)

	b, err := mcpclient.Connect(ctx, mcpconfig.Server{
		Name: "support", Command: bin, Args: []string{"serve", "--data-dir", t.TempDir()},
		Env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	local := &agent.Tool{
		Name: "localClock", Description: "Tells the time.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return map[string]string{"time": "noon"}, nil },
	}
	tools, err := agent.NewToolSet(append([]*agent.Tool{local}, b.Tools()...)...)
	if err != nil {
		t.Fatal(err)
	}
	m := usageModel{scripted.New(
		scripted.Turn{Calls: []model.ToolCall{
			scripted.Call("call-local", "localClock", `{}`),
			scripted.Call("call-kb", "searchKnowledge", `{"query":"refund policy"}`),
		}},
		scripted.Turn{Text: "done"},
	)}
	tctx, turn := p.Tracing().StartTurn(ctx, "sess-42", "chat")
	res, err := agent.Run(tctx, agent.Options{Model: m, Tools: tools,
		Messages: []model.Message{{Role: model.RoleUser, Content: "what is the refund policy?"}}})
	turn.End()
	if err != nil || res.Text != "done" {
		t.Fatalf("run: %v, %+v", err, res)
	}
	// Closing the bridge ends serve, which flushes its spans at exit.
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	all := spanIndex(rcv.WaitFor(t, 30*time.Second, "the spans of both processes", func(s []otlptest.Span) bool {
		idx := spanIndex(s)
		return len(idx.named("kb.search")) > 0 && len(idx.named("invoke_agent agentapp")) > 0
	}))

	turnSpan := all.one(t, "invoke_agent agentapp")
	wantAttrs(t, turnSpan, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "sess-42", "agentapp.front_end": "chat"})
	models := all.named("chat scripted")
	if len(models) != 2 {
		t.Fatalf("%d model-call spans, want 2", len(models))
	}
	for _, sp := range models {
		wantChild(t, sp, turnSpan)
		wantAttrs(t, sp, map[string]string{"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted", "gen_ai.usage.output_tokens": "7"})
		if v, _ := sp.Attr("gen_ai.response.finish_reasons"); v != "tool_calls" && v != "stop" {
			t.Errorf("finish reasons %q", v)
		}
	}
	localSpan := all.one(t, "execute_tool localClock")
	wantChild(t, localSpan, turnSpan)
	wantAttrs(t, localSpan, map[string]string{"gen_ai.tool.name": "localClock", "gen_ai.tool.call.id": "call-local", "gen_ai.tool.type": "function", "agentapp.tool.outcome": "ok"})
	toolSpan := all.one(t, "execute_tool searchKnowledge")
	wantChild(t, toolSpan, turnSpan)
	wantAttrs(t, toolSpan, map[string]string{"gen_ai.tool.call.id": "call-kb", "agentapp.tool.server": "support", "agentapp.tool.outcome": "ok"})
	if _, ok := toolSpan.Attr("gen_ai.tool.call.arguments"); ok {
		t.Error("arguments recorded though content recording is off")
	}

	var client, server otlptest.Span
	for _, sp := range all.named("tools/call searchKnowledge") {
		switch sp.Kind.String() {
		case "SPAN_KIND_CLIENT":
			client = sp
		case "SPAN_KIND_SERVER":
			server = sp
		}
	}
	if client.Span == nil || server.Span == nil {
		t.Fatalf("client and server tools/call spans: %v, %v", client.Span, server.Span)
	}
	wantChild(t, client, toolSpan)
	wantChild(t, server, client)
	// serve answers server/discover, so the session is of protocol
	// 2026-07-28, where both ends leave tools/call to the SDK's path; the
	// trace context rides in _meta all the same.
	wantAttrs(t, client, map[string]string{"mcp.method.name": "tools/call", "agentapp.mcp.server": "support", "network.transport": "pipe"})
	wantAttrs(t, server, map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "searchKnowledge", "network.transport": "pipe"})
	wantChild(t, all.one(t, "kb.search"), server)

	me := strconv.Itoa(os.Getpid())
	if client.Resource["process.pid"] != me || client.Resource["service.name"] != "agentapp-test-host" {
		t.Errorf("client resource %v, want pid %s", client.Resource, me)
	}
	if pid := server.Resource["process.pid"]; pid == "" || pid == me || server.Resource["service.name"] != "agentapp" ||
		server.Resource["agentapp.command"] != "serve" || server.Resource["service.version"] == "" {
		t.Errorf("serve's resource %v: want its own pid, service agentapp, command serve, a version", server.Resource)
	}
	// The connection was opened before the turn: serve's spans of the
	// session's set-up are traces of their own; everything else is the
	// turn's.
	setup := map[string]bool{"server/discover": true, "subscriptions/listen": true, "initialize": true, "notifications/initialized": true, "tools/list": true, "resources/list": true, "prompts/list": true}
	for _, sp := range all {
		if sp.TraceID() != turnSpan.TraceID() && !setup[sp.Name] {
			t.Errorf("span %q is in trace %s, not the turn's %s", sp.Name, sp.TraceID(), turnSpan.TraceID())
		}
	}
}

// TestMCPCallTraced: `agentapp mcp call … -- agentapp serve` with
// OTEL_EXPORTER_OTLP_ENDPOINT set traces the command and the server it
// starts as one trace; with OTEL_SDK_DISABLED=true beside it nothing is
// sent.
func TestMCPCallTraced(t *testing.T) {
	bin := agentappBin(t)
	rcv := otlptest.Start(t)
	run := func(extra ...string) {
		t.Helper()
		cmd := exec.Command(bin, "mcp", "call", "getOrderStatus", `{"orderId":"A-1024"}`, "--", bin, "serve", "--data-dir", t.TempDir())
		cmd.Env = append(withoutOTEL(os.Environ()), append([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}, extra...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if out, err := cmd.Output(); err != nil {
			t.Fatalf("mcp call: %v\n%s\n%s", err, out, stderr.Bytes())
		}
	}
	run("OTEL_SDK_DISABLED=true")
	if n := rcv.Requests(); n != 0 {
		t.Fatalf("with OTEL_SDK_DISABLED=true the receiver got %d requests", n)
	}
	run()
	all := spanIndex(rcv.WaitFor(t, 30*time.Second, "the command's and serve's spans", func(s []otlptest.Span) bool {
		var client, server bool
		for _, sp := range s {
			if sp.Name == "tools/call getOrderStatus" {
				client = client || sp.Kind.String() == "SPAN_KIND_CLIENT"
				server = server || sp.Kind.String() == "SPAN_KIND_SERVER"
			}
		}
		return client && server && len(spanIndex(s).named("agentapp mcp call")) == 1
	}))
	root := all.one(t, "agentapp mcp call")
	for _, sp := range all.named("tools/call getOrderStatus") {
		if sp.Kind.String() == "SPAN_KIND_CLIENT" {
			wantChild(t, sp, root)
			for _, srv := range all.named("tools/call getOrderStatus") {
				if srv.Kind.String() == "SPAN_KIND_SERVER" {
					wantChild(t, srv, sp)
					if srv.Resource["process.pid"] == sp.Resource["process.pid"] {
						t.Errorf("client and server spans from one pid %s", sp.Resource["process.pid"])
					}
				}
			}
		}
	}
}

// withoutOTEL drops the OTEL_* variables of env.
func withoutOTEL(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "OTEL_") {
			out = append(out, kv)
		}
	}
	return out
}

// TestJSONLogsCarryTraceIDs: with --log-format json a record logged with
// a traced context has trace_id and span_id; one without has neither.
func TestJSONLogsCarryTraceIDs(t *testing.T) {
	rcv := otlptest.Start(t)
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL}
	p, err := otlp.Setup(context.Background(), &otlp.Options{Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Shutdown(context.Background())
	root := newRootCmd()
	if err := root.ParseFlags([]string{"--log-format", logJSON}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log := cmdLogger(root, &buf, slog.LevelInfo)
	ctx, sp := p.Tracing().StartTurn(context.Background(), "s", "chat")
	log.InfoContext(ctx, "traced")
	log.Info("plain")
	sp.End()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log %q", buf.String())
	}
	var traced, plain map[string]any
	if json.Unmarshal([]byte(lines[0]), &traced) != nil || json.Unmarshal([]byte(lines[1]), &plain) != nil {
		t.Fatalf("log %q", buf.String())
	}
	sc := sp.SpanContext()
	if traced["trace_id"] != sc.TraceID().String() || traced["span_id"] != sc.SpanID().String() {
		t.Errorf("traced record %v, want trace %s span %s", traced, sc.TraceID(), sc.SpanID())
	}
	if _, ok := plain["trace_id"]; ok {
		t.Errorf("untraced record %v has a trace_id", plain)
	}
	_ = telemetry.ScopeName
}

// TestOTLPProtocolRefusedAtStart (issue 44, point 10): with
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json and no endpoint, a command stops
// at start naming the variable and what this build sends, instead of
// running untraced; with OTEL_SDK_DISABLED=true it runs.
func TestOTLPProtocolRefusedAtStart(t *testing.T) {
	bin := agentappBin(t)
	run := func(extra ...string) (string, error) {
		cmd := exec.Command(bin, "mcp", "call", "getOrderStatus", `{"orderId":"A-1024"}`, "--", bin, "serve", "--data-dir", t.TempDir())
		cmd.Env = append(withoutOTEL(os.Environ()), append([]string{"OTEL_EXPORTER_OTLP_PROTOCOL=http/json"}, extra...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err == nil || !strings.Contains(out, "OTEL_EXPORTER_OTLP_PROTOCOL=http/json is not supported") ||
		!strings.Contains(out, "http/protobuf") || strings.Contains(out, "or grpc") {
		t.Fatalf("mcp call with http/json: err %v, output:\n%s\nwant a refusal naming the variable and http/protobuf only", err, out)
	}
	if out, err := run("OTEL_SDK_DISABLED=true"); err != nil {
		t.Fatalf("with OTEL_SDK_DISABLED=true: %v\n%s", err, out)
	}
}
