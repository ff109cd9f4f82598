package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestMaxSessionTokensOneShot: -p stops at --max-session-tokens before the
// model is called, names the cap and exits with exitBudget.
func TestMaxSessionTokensOneShot(t *testing.T) {
	chatEnv(t)
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "-p", "订单 A-1024 到哪了？", "--max-session-tokens", "100")
	if code != exitBudget || out != "" || !strings.Contains(errOut, "the turn was stopped at the budget --max-session-tokens 100: ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestMaxCostWithProviderUsage: against an OpenAI-compatible server that
// reports usage, --max-cost with the config's pricing stops the turn after
// the call whose reported usage passes the cap.
func TestMaxCostWithProviderUsage(t *testing.T) {
	chatEnv(t)
	var calls atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		// Streamed, as -p asks; the usage comes in the last chunk, as
		// with stream_options.include_usage.
		w.Header().Set("Content-Type", "text/event-stream")
		delta, finish := `{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"getOrderStatus","arguments":"{\"orderId\":\"A-1024\"}"}}]}`, "tool_calls"
		if n > 1 {
			delta, finish = `{"role":"assistant","content":"shipped"}`, "stop"
		}
		chunk := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":%s}` + "\n\n"
		fmt.Fprintf(w, chunk, `[{"index":0,"delta":`+delta+`,"finish_reason":null}]`)
		fmt.Fprintf(w, chunk, `[{"index":0,"delta":{},"finish_reason":"`+finish+`"}]`)
		fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":500000,"completion_tokens":100,"total_tokens":500100}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(hs.Close)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("OPENAI_BASE_URL", hs.URL+"/v1")
	t.Setenv("OPENAI_MODEL", "gpt-4o")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agentapp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}, "pricing": {"gpt-4o": {"input": 2.5, "output": 10}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--config", cfg, "-p", "订单 A-1024 到哪了？", "--max-cost", "1")
	if code != exitBudget || !strings.Contains(errOut, "the turn was stopped at the budget --max-cost 1: 1.2510 in this session (used)") || calls.Load() != 1 {
		t.Fatalf("exit %d after %d calls\nstdout:\n%s\nstderr:\n%s", code, calls.Load(), out, errOut)
	}
	// Without the model's price the cap cannot be kept: a usage error.
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--config", cfg, "-p", "hi", "--max-cost", "1")
	if code != 2 || !strings.Contains(errOut, `--max-cost needs the price of model gpt-4o: add "pricing"`) {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
}
