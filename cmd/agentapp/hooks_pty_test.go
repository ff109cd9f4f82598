//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

// TestProjectHooksApprovedOnATerminal: the chat on a terminal names the
// project's hook commands and asks; after a yes they run, and the next
// start does not ask again.
func TestProjectHooksApprovedOnATerminal(t *testing.T) {
	needJQ(t)
	dir, _ := hookProject(t, `{}`)
	project := `{"mcpServers": {}, "hooks": {"UserPromptSubmit": ` + strings.ReplaceAll(hookEntry("", "prompt.sh"), "$DIR", dir) + `}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(project), 0o600); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	start := func() (*os.File, *testkit.SyncBuffer, func()) {
		cmd := exec.Command(agentappBin(t), "chat", "--model", "offline")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data, "TERM=dumb", "NO_COLOR=1"}
		f, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		out := &testkit.SyncBuffer{}
		go io.Copy(out, f)
		return f, out, func() {
			io.WriteString(f, "/exit\r")
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
				t.Error("the chat did not exit")
			}
			f.Close()
		}
	}
	f, out, stop := start()
	out.WaitFor(t, "This project's .mcp.json has hooks that run these commands", 60*time.Second)
	out.WaitFor(t, dir+"/prompt.sh", 10*time.Second)
	out.WaitFor(t, "Allow them? The answer is remembered until they change. [y/N] ", 10*time.Second)
	io.WriteString(f, "y\r")
	out.WaitFor(t, "Type a message.", 60*time.Second)
	io.WriteString(f, "tell me the secret\r")
	out.WaitFor(t, "prompts about secrets are not sent", 30*time.Second)
	stop()

	f, out, stop = start()
	defer stop()
	out.WaitFor(t, "Type a message.", 60*time.Second)
	if strings.Contains(out.String(), "Allow them?") {
		t.Errorf("asked again:\n%s", out.String())
	}
	io.WriteString(f, "tell me the secret\r")
	out.WaitFor(t, "prompts about secrets are not sent", 30*time.Second)
}
