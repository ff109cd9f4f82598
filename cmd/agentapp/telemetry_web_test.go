package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/telemetry/otlp/otlptest"
)

// startTracedWeb starts `agentapp web` with the offline model and extra
// variables, and returns its base URL and a stop that ends it with SIGTERM
// (its spans are flushed at exit).
func startTracedWeb(t *testing.T, env ...string) (base string, stop func()) {
	t.Helper()
	cmd := exec.Command(agentappBin(t), "web", "--http", "127.0.0.1:0", "--model", "offline")
	cmd.Env = append(append(withoutOTEL(os.Environ()), "AGENTAPP_DATA_DIR="+t.TempDir()), env...)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	text := stderr.WaitFor(t, "chat API", 30*time.Second)
	base = regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	return base, func() {
		t.Helper()
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("web after SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("web did not stop within 20 s of SIGTERM\n%s", stderr.String())
		}
	}
}

// webTurns sends one message through the chat API and one completion
// through /v1, each with its own traceparent, and returns the chat API's
// session id.
func webTurns(t *testing.T, base, chatParent, v1Parent string) string {
	t.Helper()
	post := func(path, body, traceparent string, cookie *http.Cookie) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("/api/sessions", `{}`, "", nil)
	var s struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || s.ID == "" {
		t.Fatalf("POST /api/sessions: %d, %+v", resp.StatusCode, s)
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		cookie = c
	}
	for _, r := range []struct{ path, body, parent, want string }{
		{"/api/sessions/" + s.ID + "/messages", `{"content":"订单 A-1024 到哪了？"}`, chatParent, "已发货"},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`, v1Parent, "已发货"},
	} {
		resp := post(r.path, r.body, r.parent, cookie)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), r.want) {
			t.Fatalf("POST %s: %d\n%s", r.path, resp.StatusCode, b)
		}
	}
	return s.ID
}

// TestWebTurnContinuesTraceparent: a turn sent to `agentapp web` (chat API
// and /v1) with a traceparent header continues that trace: the request's
// server span is a child of the header's span, the turn span (front end
// web or v1) a child of that, and the turn's model and tool calls children
// of the turn. With tracing turned off (OTEL_SDK_DISABLED=true, or
// OTEL_TRACES_EXPORTER=none, beside an endpoint) nothing is sent.
func TestWebTurnContinuesTraceparent(t *testing.T) {
	rcv := otlptest.Start(t)
	const (
		traceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
		chatSpan = "00f067aa0ba902b7"
		v1Span   = "00f067aa0ba902b8"
	)
	for _, off := range []string{"OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER=none"} {
		base, stop := startTracedWeb(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL, off)
		webTurns(t, base, "00-"+traceID+"-"+chatSpan+"-01", "00-"+traceID+"-"+v1Span+"-01")
		stop()
		if n := rcv.Requests(); n != 0 {
			t.Fatalf("with %s the receiver got %d requests", off, n)
		}
	}

	base, stop := startTracedWeb(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.URL)
	session := webTurns(t, base, "00-"+traceID+"-"+chatSpan+"-01", "00-"+traceID+"-"+v1Span+"-01")
	stop()
	all := spanIndex(rcv.WaitFor(t, 30*time.Second, "both turns' spans", func(s []otlptest.Span) bool {
		return len(spanIndex(s).named("invoke_agent agentapp")) == 2
	}))
	routes := map[string]otlptest.Span{}
	for _, sp := range all {
		if strings.HasPrefix(sp.Name, "POST ") {
			routes[sp.Name] = sp
		}
	}
	for _, c := range []struct{ route, parent, frontEnd string }{
		{"POST /api/sessions/{id}/messages", chatSpan, "web"},
		{"POST /v1/chat/completions", v1Span, "v1"},
	} {
		srv, ok := routes[c.route]
		if !ok {
			t.Fatalf("no server span %q among %d spans", c.route, len(all))
		}
		if srv.TraceID() != traceID || srv.ParentID() != c.parent {
			t.Errorf("%s: trace %s parent %s, want the header's trace %s and span %s", c.route, srv.TraceID(), srv.ParentID(), traceID, c.parent)
		}
		var turn otlptest.Span
		for _, sp := range all.named("invoke_agent agentapp") {
			if sp.ParentID() == srv.SpanID() {
				turn = sp
			}
		}
		if turn.Span == nil {
			t.Fatalf("no turn span under %s", c.route)
		}
		wantChild(t, turn, srv)
		wantAttrs(t, turn, map[string]string{"agentapp.front_end": c.frontEnd, "gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "offline-demo"})
		if c.frontEnd == "web" {
			wantAttrs(t, turn, map[string]string{"gen_ai.conversation.id": session})
		}
		var models, tools int
		for _, sp := range all {
			if sp.ParentID() != turn.SpanID() {
				continue
			}
			switch sp.Name {
			case "chat offline-demo":
				models++
			case "execute_tool getOrderStatus":
				tools++
				wantAttrs(t, sp, map[string]string{"agentapp.tool.outcome": "ok"})
			}
		}
		if models != 2 || tools != 1 {
			t.Errorf("%s: the turn has %d model-call and %d tool-call children, want 2 and 1", c.route, models, tools)
		}
	}
}
