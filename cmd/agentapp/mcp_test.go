package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func decodeMCPOutput(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, stdout)
	}
	return v
}

func TestMCPCLIStdio(t *testing.T) {
	ts := mcpTestServerBin(t)
	pidfile := filepath.Join(t.TempDir(), "pid")

	t.Run("tools", func(t *testing.T) {
		out, stderr, code := runChatCLI(t, "", "mcp", "tools", "--", ts, "-pidfile", pidfile)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		v := decodeMCPOutput(t, out)
		tools, _ := v["tools"].([]any)
		var names []string
		for _, x := range tools {
			names = append(names, x.(map[string]any)["name"].(string))
		}
		if got := strings.Join(names, ","); got != "big,echo,env,fail,noise,sleep" {
			t.Errorf("tools %s", got)
		}
		var pid, pgid int
		b, err := os.ReadFile(pidfile)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Sscan(string(b), &pid, &pgid)
		// Nothing of the server's process group may be left after the command.
		if runtime.GOOS == "linux" && len(testkit.LiveGroup(t, pgid)) > 0 {
			t.Errorf("the server's process group %d is still alive after `mcp tools`", pgid)
		}
	})

	t.Run("call", func(t *testing.T) {
		out, stderr, code := runChatCLI(t, "", "mcp", "call", "echo", `{"text":"hi"}`, "--", ts)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		v := decodeMCPOutput(t, out)
		if v["output"] != `{"echo":"hi"}` || v["error"] != nil {
			t.Errorf("output %v error %v", v["output"], v["error"])
		}
		res, _ := v["result"].(map[string]any)
		if sc, _ := res["structuredContent"].(map[string]any); sc["echo"] != "hi" {
			t.Errorf("raw result %v", res)
		}
	})

	t.Run("tool error", func(t *testing.T) {
		out, _, code := runChatCLI(t, "", "mcp", "call", "fail", "--", ts)
		if code != 1 {
			t.Fatalf("exit %d, want 1", code)
		}
		v := decodeMCPOutput(t, out)
		if v["error"] != "tool fail returned an error: boom: bad input; fix the arguments and retry" || v["output"] != nil {
			t.Errorf("output %v error %v", v["output"], v["error"])
		}
		if res, _ := v["result"].(map[string]any); res["isError"] != true {
			t.Errorf("raw result %v", res)
		}
	})

	t.Run("resources and read", func(t *testing.T) {
		out, stderr, code := runChatCLI(t, "", "mcp", "resources", "--", ts)
		if code != 0 || !strings.Contains(out, `"uri": "test://hello"`) {
			t.Fatalf("resources: exit %d\n%s%s", code, out, stderr)
		}
		out, stderr, code = runChatCLI(t, "", "mcp", "read", "test://hello", "--", ts)
		if code != 0 || !strings.Contains(out, `"text": "hello resource"`) {
			t.Fatalf("read: exit %d\n%s%s", code, out, stderr)
		}
	})

	t.Run("server by name from config", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "mcp.json")
		doc := fmt.Sprintf(`{"mcpServers":{"ts":{"command":%q}}}`, ts)
		if err := os.WriteFile(cfg, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := runChatCLI(t, "", "mcp", "call", "echo", `{"text":"named"}`, "--server", "ts", "--config", cfg)
		if code != 0 || decodeMCPOutput(t, out)["output"] != `{"echo":"named"}` {
			t.Fatalf("exit %d\n%s%s", code, out, stderr)
		}
		_, stderr, code = runChatCLI(t, "", "mcp", "tools", "--server", "other", "--config", cfg)
		if code != 2 || !strings.Contains(stderr, `no server named "other"`) {
			t.Errorf("unknown name: exit %d: %s", code, stderr)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"mcp", "tools"},
			{"mcp", "tools", "--server", "http://127.0.0.1:1/mcp", "--", ts},
			{"mcp", "call", "echo", `[1]`, "--", ts},
			{"mcp", "call", "echo", `{}`, "extra", "--", ts},
			{"mcp", "tools", "--server", "name-without-config"},
			{"mcp", "frobnicate"},
		} {
			if _, stderr, code := runChatCLI(t, "", args...); code != 2 {
				t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
			}
		}
	})

	t.Run("connection failure", func(t *testing.T) {
		out, stderr, code := runChatCLI(t, "", "mcp", "tools", "--", "agentapp-no-such-server-xyz")
		if code != 3 || out != "" || !strings.Contains(stderr, "command not found: agentapp-no-such-server-xyz (is it installed and on PATH?)") {
			t.Errorf("exit %d, stdout %q, stderr %s", code, out, stderr)
		}
		_, stderr, code = runChatCLI(t, "", "mcp", "tools", "--", ts, "-mode", "exit-start")
		if code != 3 || !strings.Contains(stderr, "fatal: no API key configured") {
			t.Errorf("exit %d, stderr %s", code, stderr)
		}
	})
}

func TestMCPCLIHTTP(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	t.Setenv("AGENTAPP_MCP_TOKEN", "")

	out, stderr, code := runChatCLI(t, "", "mcp", "call", "ping", "--server", hs.URL, "--token", "tok")
	if code != 0 || decodeMCPOutput(t, out)["output"] != "pong" {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = runChatCLI(t, "", "mcp", "tools", "--server", hs.URL)
	if code != 3 || !strings.Contains(stderr, "401 Unauthorized: no bearer token was sent") {
		t.Errorf("without token: exit %d: %s", code, stderr)
	}
}
