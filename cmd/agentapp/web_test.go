package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// TestWebRefusesOpenOperatorOffLoopback: bound beyond loopback without
// AGENTAPP_WEB_TOKEN, web refuses to start (usage error, exit 2) and
// creates no data directory.
func TestWebRefusesOpenOperatorOffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8080"} {
		dir := t.TempDir() + "/data"
		cmd := exec.Command(agentappBin(t), "web", "--http", addr)
		cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+dir, "AGENTAPP_WEB_TOKEN=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("web --http %s: %v, want exit 2", addr, err)
		}
		if !strings.Contains(stderr.String(), "AGENTAPP_WEB_TOKEN") || !strings.Contains(stderr.String(), "--help") {
			t.Errorf("web --http %s said %q; want it to name AGENTAPP_WEB_TOKEN and --help", addr, stderr.String())
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("web --http %s left a data directory behind: %v", addr, err)
		}
	}
}

// TestWebRefusesOpenV1OffLoopback: bound beyond loopback with the
// operator token but without AGENTAPP_API_KEYS, web refuses to start and
// says which variable to set or which flag opts out.
func TestWebRefusesOpenV1OffLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:8080"} {
		dir := t.TempDir() + "/data"
		// Bounded: a web that starts anyway is killed and reported.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, agentappBin(t), "web", "--http", addr)
		cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+dir, "AGENTAPP_WEB_TOKEN=tok", "AGENTAPP_API_KEYS=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("web --http %s: %v, want exit 2", addr, err)
		}
		if msg := stderr.String(); !strings.Contains(msg, "AGENTAPP_API_KEYS") || !strings.Contains(msg, "--open-v1") {
			t.Errorf("web --http %s said %q; want it to name AGENTAPP_API_KEYS and --open-v1", addr, msg)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("web --http %s left a data directory behind: %v", addr, err)
		}
	}
}

// TestWebAPIKeysFromEnv: the keys of AGENTAPP_API_KEYS are required by
// /v1 and the operator token guards /metrics, as the README says.
func TestWebAPIKeysFromEnv(t *testing.T) {
	cmd := exec.Command(agentappBin(t), "web", "--http", "127.0.0.1:0", "--model", "offline")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_WEB_TOKEN=tok", "AGENTAPP_API_KEYS=k1, k2", "AGENTAPP_METRICS_TOKEN=")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	base := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	if !strings.Contains(text, "2 keys from AGENTAPP_API_KEYS") {
		t.Errorf("banner does not say /v1 needs keys:\n%s", text)
	}
	do := func(method, path, auth string) int {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		method, path, auth string
		want               int
	}{
		{"POST", "/v1/chat/completions", "", 401},
		{"POST", "/v1/chat/completions", "Bearer k3", 401},
		{"POST", "/v1/chat/completions", "Bearer k2", 200},
		{"GET", "/metrics", "", 401},
		{"GET", "/metrics", "Bearer tok", 200},
	} {
		if got := do(c.method, c.path, c.auth); got != c.want {
			t.Errorf("%s %s (%q): %d, want %d", c.method, c.path, c.auth, got, c.want)
		}
	}
}

// TestWebServesAndStops runs the binary with a token on a loopback port:
// the API answers, the operator view wants the token, SIGTERM stops it.
func TestWebServesAndStops(t *testing.T) {
	cmd := exec.Command(agentappBin(t), "web", "--http", "127.0.0.1:0", "--model", "offline")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_WEB_TOKEN=tok")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	base := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	if !strings.Contains(text, "token from AGENTAPP_WEB_TOKEN") {
		t.Errorf("banner does not say the operator view needs the token:\n%s", text)
	}
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if len(c.Choices) != 1 || !strings.Contains(c.Choices[0].Message.Content, "已发货") {
		t.Errorf("completion %+v", c)
	}
	resp, err = http.Get(base + "/operator")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("operator without the token: %d", resp.StatusCode)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("web did not stop within 20 s of SIGTERM")
	}
	if !strings.Contains(stderr.String(), "agentapp web: stopped") {
		t.Errorf("no stop line:\n%s", stderr.String())
	}
}

// TestWebJSONLogsAndTrace: with --log-format json every line web writes on
// stderr is a JSON record, the banner (one record, its rows as fields)
// and the stop included; --trace adds the steps of each turn as records
// labelled with the turn's session.
func TestWebJSONLogsAndTrace(t *testing.T) {
	cmd := exec.Command(agentappBin(t), "--log-format", "json", "web", "--trace", "--http", "127.0.0.1:0", "--model", "offline")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENT_GUARD_CONFIRM=createTicket")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	stderr.WaitFor(t, `"chat_api"`, 30*time.Second)
	records := func() []map[string]any {
		var recs []map[string]any
		for line := range strings.Lines(stderr.String()) {
			var rec map[string]any
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatalf("stderr line is not JSON: %q", line)
			}
			recs = append(recs, rec)
		}
		return recs
	}
	var base string
	for _, rec := range records() {
		if api, ok := rec["chat_api"].(string); ok {
			base = strings.TrimSuffix(api, "/api/sessions")
			if guards, _ := rec["guards"].([]any); len(guards) == 0 || rec["trace"] == nil || rec["operator"] == nil {
				t.Errorf("banner record lacks its guards, trace or operator fields: %v", rec)
			}
		}
	}
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	stderr.WaitFor(t, "done: steps=1", 10*time.Second)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("web after SIGTERM: %v\n%s", err, stderr)
	}
	var steps []string
	stopped := false
	for _, rec := range records() {
		msg, _ := rec["msg"].(string)
		if rest, ok := strings.CutPrefix(msg, "[trace] session=oa-"); ok && rec["trace"] == true {
			steps = append(steps, rest)
		}
		stopped = stopped || strings.HasPrefix(msg, "agentapp web: stopped after")
	}
	if len(steps) != 5 || !strings.Contains(steps[1], "act: getOrderStatus") || !strings.Contains(steps[2], "observe ok: getOrderStatus") {
		t.Errorf("trace records of the turn: %q", steps)
	}
	if !stopped {
		t.Errorf("no record of the stop:\n%s", stderr)
	}
}

// TestWebReplacedLocalToolStaysOffered: agentapp serve plugged into the
// web with tool search on answers the order question through its own
// getOrderStatus, and the banner says which local tools it replaced.
func TestWebReplacedLocalToolStaysOffered(t *testing.T) {
	bin := agentappBin(t)
	data := t.TempDir()
	cmd := exec.Command(bin, "web", "--http", "127.0.0.1:0", "--model", "offline", "--tool-search", "on", "--mcp", "shop="+bin+" serve")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+data, "HOME="+data, "XDG_CONFIG_HOME="+data)
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	if !strings.Contains(text, "createTicket replaced by MCP server shop's; getOrderStatus replaced by MCP server shop's") {
		t.Errorf("the banner does not say which local tools were replaced:\n%s", text)
	}
	base := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if len(c.Choices) != 1 || !strings.Contains(c.Choices[0].Message.Content, "已发货") {
		t.Errorf("completion %+v, want the order's status from shop's getOrderStatus\n%s", c, stderr.String())
	}
}
