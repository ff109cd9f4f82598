//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

// tsServerNext runs the TypeScript SDK v2 server (stateless) of
// .ci/tsserver-next and returns its endpoint.
func tsServerNext(t *testing.T) string {
	return testkit.StartTSServerNext(t, filepath.Join("..", "..", ".ci", "tsserver-next"))
}

// agentapp mcp against a TypeScript SDK v2 server at 2026-07-28: tools
// lists its tools, call runs one, and a call whose result asks for input
// shows the form on the terminal and sends the answer back.
func TestMCPTypeScriptServerNext(t *testing.T) {
	url := tsServerNext(t)
	bin := agentappBin(t)
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = t.TempDir()
		cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agentapp %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("mcp", "tools", "--server", url); !strings.Contains(out, `"name": "add"`) || !strings.Contains(out, `"name": "refund"`) {
		t.Errorf("mcp tools:\n%s", out)
	}
	if out := run("mcp", "call", "add", `{"a":2,"b":3}`, "--server", url); !strings.Contains(out, `"output": "5"`) {
		t.Errorf("mcp call add:\n%s", out)
	}

	cmd := exec.Command(bin, "mcp", "call", "refund", `{"order":"A-1"}`, "--server", url)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir())
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &testkit.SyncBuffer{}
	go io.Copy(out, f)
	out.WaitFor(t, "(required): ", 30*time.Second)
	io.WriteString(f, "damaged\r")
	out.WaitFor(t, "[Y/n] ", 30*time.Second)
	io.WriteString(f, "\r")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("agentapp mcp did not finish:\n%s", out.String())
	}
	// The process has exited, but the copy from the terminal may not have
	// read its last lines yet.
	out.WaitFor(t, "refunded A-1: damaged", 10*time.Second)
	if text := out.String(); !strings.Contains(text, "Why should order A-1 be refunded?") {
		t.Errorf("the form and its answer:\n%s", text)
	}
}

// In the chat, a tool of the TypeScript SDK v2 server whose result asks for
// input (2026-07-28) shows the form on the terminal inside the turn, like a
// server's elicitation/create, and the tool's answer follows.
func TestChatTypeScriptServerNextForm(t *testing.T) {
	url := tsServerNext(t)
	data := t.TempDir()
	cfg := filepath.Join(data, "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"ts": {"url": "`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, out := startPTYChat(t, data, "--model", "offline", "--config", cfg, "--permission-mode", "allow-all")
	io.WriteString(f, `/call refund {"order":"A-1"}`+"\r")
	out.WaitFor(t, "Why should order A-1 be refunded?", 30*time.Second)
	out.WaitFor(t, "(required): ", 30*time.Second)
	io.WriteString(f, "damaged\r")
	out.WaitFor(t, "[Y/n] ", 30*time.Second)
	io.WriteString(f, "\r")
	out.WaitFor(t, "✓ refund", 30*time.Second)
	out.WaitFor(t, "refunded A-1: damaged", 30*time.Second)
}
