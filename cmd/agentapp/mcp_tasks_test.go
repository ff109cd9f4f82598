package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runMCP runs agentapp mcp with args and returns stdout, stderr and the
// exit code, within a bound.
func runMCP(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentappBin(t), append([]string{"mcp"}, args...)...)
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("agentapp mcp %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("agentapp mcp %v did not finish within 2 minutes:\n%s", args, errb.String())
	}
	return out.String(), errb.String(), code
}

// simulate-research-query requires a task: agentapp mcp call runs it as
// one, shows each stage on stderr and prints the report.
func TestMCPCallResearchTask(t *testing.T) {
	bin := everythingBin(t)
	out, stderr, code := runMCP(t, "call", "simulate-research-query", `{"topic":"go"}`, "--", bin)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, `"output": "# Research Report: go`) {
		t.Errorf("stdout lacks the report:\n%.600s", out)
	}
	for _, want := range []string{"simulate-research-query ⋯ task ", "working: Gathering sources...", "simulate-research-query ⋯ completed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// --task refuses a tool that does not run as a task; mcp tasks lists the
// server's tasks and reports an unknown one.
func TestMCPTaskFlagAndTasksCommands(t *testing.T) {
	bin := everythingBin(t)
	out, _, code := runMCP(t, "call", "--task", "echo", `{"message":"hi"}`, "--", bin)
	if code != mcpExitToolError || !strings.Contains(out, "does not run it as a task") {
		t.Errorf("call --task echo: exit %d\n%s", code, out)
	}
	out, stderr, code := runMCP(t, "tasks", "list", "--", bin)
	if code != 0 || !strings.Contains(out, `"tasks": []`) {
		t.Errorf("tasks list: exit %d\n%s\n%s", code, out, stderr)
	}
	_, stderr, code = runMCP(t, "tasks", "get", "no-such-task", "--", bin)
	if code != mcpExitConnection || !strings.Contains(stderr, `tasks/get "no-such-task"`) {
		t.Errorf("tasks get of an unknown task: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runMCP(t, "tasks", "frobnicate", "--", bin)
	if code != mcpExitUsage {
		t.Errorf("tasks frobnicate: exit %d\n%s", code, stderr)
	}
}

// TestChatCallShowsTaskStatus: /call of a tool that runs as an MCP task
// (agentapp serve's requestRefund, which waits for an operator) shows the
// task's status as a model's call does, not a blank screen until it ends.
func TestChatCallShowsTaskStatus(t *testing.T) {
	bin := agentappBin(t)
	p := startChat(t, bin, "--model", "offline", "--mcp", "shop="+bin+" serve", "--allow", "shop:requestRefund")
	p.send(`/call requestRefund {"orderId":"A-1024","reason":"the cup arrived broken"}`)
	p.err.WaitFor(t, "⋯ requestRefund working: waiting for an operator", 60*time.Second)
	// Ctrl-C cancels the call; end of input ends the chat.
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	p.err.WaitFor(t, "✗ requestRefund cancelled after", 30*time.Second)
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the chat did not exit after end of input:\n%s", p.err.String())
	}
}
