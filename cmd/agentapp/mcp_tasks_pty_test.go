//go:build unix

package main

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

// With ambiguous: true the research task asks which meaning is meant
// (input_required): agentapp mcp asks the form on the terminal and the
// answer reaches the task.
func TestMCPResearchTaskAsksOnATerminal(t *testing.T) {
	bin := everythingBin(t)
	cmd := exec.Command(agentappBin(t), "mcp", "call", "simulate-research-query", `{"topic":"python","ambiguous":true}`, "--", bin)
	cmd.Dir = t.TempDir()
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &testkit.SyncBuffer{}
	copied := make(chan struct{})
	go func() { io.Copy(out, f); close(copied) }()
	out.WaitFor(t, "Python snake species", 60*time.Second)
	out.WaitFor(t, ": ", 10*time.Second)
	for _, line := range []string{"2", ""} { // the snake, then send
		io.WriteString(f, line+"\r")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("agentapp mcp did not finish:\n%s", out.String())
	}
	// The process has exited; the copy from the terminal ends once it
	// has read the last lines.
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
	}
	text := out.String()
	for _, want := range []string{"input_required", "Research Report: python (snake)"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
