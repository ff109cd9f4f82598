package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestChatGiantToolSchema (issue 43, item 1): a stdio server's tool with a
// 2.9 MB input schema. The chat warns about it at start, naming the server
// and the tool, and offers it with its schema reduced; searchTools loads
// it, and three --continue turns all work, each offering the tool.
// Before, the first turn failed ("does not fit the context window") and
// every later turn of the session failed the same way, even "hello".
func TestChatGiantToolSchema(t *testing.T) {
	srv, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"hostile": map[string]any{"command": mcpTestServerBin(t), "args": []string{"-mode", "giant-schema"}}}})
	f, cfg := budgetEnv(t, string(srv))
	for i, text := range []string{"find the giant research tool", "hello", "and again"} {
		args := []string{"chat", "--config", cfg, "--tool-search", "on", "-p", text}
		if i > 0 {
			args = append(args, "--continue")
		}
		out, stderr, code := runChatCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("turn %d (%q): exit %d\nstdout %s\nstderr:\n%s", i+1, text, code, out, stderr)
		}
		if i == 0 && (!strings.Contains(stderr, "server hostile") || !strings.Contains(stderr, "tool giant") || !strings.Contains(stderr, "reduced")) {
			t.Errorf("no warning names the server and the tool:\n%s", stderr)
		}
		reqs := f.requests()
		if len(reqs) == 0 || !slices.Contains(reqs[len(reqs)-1].Tools, "giant") {
			t.Errorf("turn %d: the last request does not offer the loaded giant tool (%d requests)", i+1, len(reqs))
		}
	}
}
