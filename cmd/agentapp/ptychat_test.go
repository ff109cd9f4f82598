//go:build unix

package main

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

// startPTYChat runs `agentapp chat ARGS…` on a terminal with data as its
// HOME and data directory, waits for its prompt, and returns the terminal
// and what the chat has written to it. When the test ends the chat is told
// /exit; one still running 30 s later is killed with its whole session
// (pty.Start makes one), so the servers it started go too, and the test
// fails.
func startPTYChat(t *testing.T, data string, args ...string) (*os.File, *testkit.SyncBuffer) {
	t.Helper()
	cmd := exec.Command(agentappBin(t), append([]string{"chat"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data, "TERM=dumb", "NO_COLOR=1"}
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		defer f.Close()
		io.WriteString(f, "/exit\r")
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Error("the chat did not exit")
		}
	})
	out := &testkit.SyncBuffer{}
	go io.Copy(out, f)
	out.WaitFor(t, "Type a message.", 30*time.Second)
	return f, out
}
