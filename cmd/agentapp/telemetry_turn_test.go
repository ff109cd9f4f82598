package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/telemetry/otlp/otlptest"
)

// TestChatTurnTraced: one `agentapp chat -p` turn with the offline model,
// which calls a local tool (getOrderStatus: with AGENT_GUARD_MCP_STRICT
// local names win) and a tool of a second process (searchKnowledge of
// `agentapp serve`, given with --mcp), yields one trace: the turn span →
// model-call and tool-call spans → the client's tools/call → serve's
// tools/call, linked by parent id across the two processes, with the
// attributes and each process's resource.
func TestChatTurnTraced(t *testing.T) {
	bin := agentappBin(t)
	rcv := otlptest.Start(t)
	var stdout, stderr bytes.Buffer
	chat := func(env ...string) *exec.Cmd {
		t.Helper()
		data := t.TempDir()
		cmd := exec.Command(bin, "chat", "--model", "offline", "--mcp", bin+" serve", "--output-format", "json",
			"-p", "use getOrderStatus and searchKnowledge for order A-1024")
		cmd.Dir = t.TempDir()
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data,
			"AGENT_GUARD_MCP_STRICT=1", "OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.URL}, env...)
		stdout.Reset()
		stderr.Reset()
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("chat -p: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
		return cmd
	}
	// Tracing off beside an endpoint: neither the chat nor serve (which
	// inherits the variables) sends anything.
	for _, off := range []string{"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=none"} {
		chat(off)
		if n := rcv.Requests(); n != 0 {
			t.Fatalf("with %s the receiver got %d requests", off, n)
		}
	}
	cmd := chat()
	var out struct {
		Session string `json:"session"`
		Answer  string `json:"answer"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || out.Session == "" || out.Answer == "" {
		t.Fatalf("chat -p --output-format json: %v\n%s", err, stdout.String())
	}
	// The chat flushed its spans at exit, and serve (ended by the chat)
	// at its own.
	all := spanIndex(rcv.WaitFor(t, 30*time.Second, "the turn's spans of both processes", func(s []otlptest.Span) bool {
		idx := spanIndex(s)
		return len(idx.named("invoke_agent agentapp")) == 1 && len(idx.named("tools/call searchKnowledge")) == 2
	}))

	turn := all.one(t, "invoke_agent agentapp")
	if turn.ParentID() != "" {
		t.Errorf("the turn span has a parent %s; a chat turn starts its trace", turn.ParentID())
	}
	wantAttrs(t, turn, map[string]string{"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": out.Session,
		"agentapp.front_end": "chat", "gen_ai.request.model": "offline-demo", "gen_ai.usage.input_tokens": "0"})
	models := all.named("chat offline-demo")
	if len(models) != 2 {
		t.Fatalf("%d model-call spans, want 2 (the tool calls, then the answer)", len(models))
	}
	for _, sp := range models {
		wantChild(t, sp, turn)
		wantAttrs(t, sp, map[string]string{"gen_ai.request.model": "offline-demo", "gen_ai.usage.output_tokens": "0"})
	}
	local := all.one(t, "execute_tool getOrderStatus")
	wantChild(t, local, turn)
	wantAttrs(t, local, map[string]string{"gen_ai.tool.name": "getOrderStatus", "gen_ai.tool.type": "function", "agentapp.tool.outcome": "ok"})
	if _, ok := local.Attr("agentapp.tool.server"); ok {
		t.Error("the local tool's span names a server")
	}
	remote := all.one(t, "execute_tool searchKnowledge")
	wantChild(t, remote, turn)
	wantAttrs(t, remote, map[string]string{"gen_ai.tool.name": "searchKnowledge", "gen_ai.tool.type": "extension",
		"agentapp.tool.server": "agentapp", "agentapp.tool.outcome": "ok"})

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
	wantChild(t, client, remote)
	wantChild(t, server, client)
	wantAttrs(t, client, map[string]string{"agentapp.mcp.server": "agentapp", "network.transport": "pipe"})
	wantChild(t, all.one(t, "kb.search"), server)

	chatPid := strconv.Itoa(cmd.Process.Pid)
	for _, sp := range []otlptest.Span{turn, local, remote, client} {
		if r := sp.Resource; r["process.pid"] != chatPid || r["service.name"] != "agentapp" || r["service.version"] == "" {
			t.Errorf("span %q: resource %v, want the chat's pid %s, service agentapp and a version", sp.Name, r, chatPid)
		}
	}
	if r := server.Resource; r["process.pid"] == "" || r["process.pid"] == chatPid || r["service.name"] != "agentapp" || r["agentapp.command"] != "serve" {
		t.Errorf("serve's resource %v: want its own pid, service agentapp, command serve", r)
	}
	setup := map[string]bool{"server/discover": true, "subscriptions/listen": true, "initialize": true, "notifications/initialized": true, "tools/list": true, "resources/list": true, "prompts/list": true, "logging/setLevel": true, "skills/list": true}
	for _, sp := range all {
		if sp.TraceID() != turn.TraceID() && !setup[sp.Name] && !strings.HasPrefix(sp.Name, "notifications/") {
			t.Errorf("span %q is in trace %s, not the turn's %s", sp.Name, sp.TraceID(), turn.TraceID())
		}
	}
}
