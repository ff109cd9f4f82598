//go:build unix

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

// TestApprovalChoicesOnATerminal: the approval question names its choices;
// ? explains them and asks again; "a" holds for the session after
// --continue; "p" writes the local scope's allow rule, so a new session
// does not ask. The server is agentapp serve, whose createTicket asks.
func TestApprovalChoicesOnATerminal(t *testing.T) {
	bin := agentappBin(t)
	root := t.TempDir()
	home, data, proj := filepath.Join(root, "home"), filepath.Join(root, "data"), filepath.Join(root, "proj")
	for _, d := range []string{home, proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	call := `/call createTicket {"subject":"破损","description":"A-1024 的杯子碎了"}` + "\r"
	chat := func(extra ...string) (*os.File, *testkit.SyncBuffer, func()) {
		cmd := exec.Command(bin, append([]string{"chat", "--model", "offline", "--mcp", "shop=" + bin + " serve"}, extra...)...)
		cmd.Dir = proj
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
			"AGENTAPP_DATA_DIR=" + data, "TERM=dumb", "NO_COLOR=1"}
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		out := &testkit.SyncBuffer{}
		go io.Copy(out, f)
		out.WaitFor(t, "Type a message.", 60*time.Second)
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

	f, out, stop := chat()
	// A message first, so that the session is stored and --continue
	// finds it.
	io.WriteString(f, "你好\r")
	out.WaitFor(t, "您好！", 30*time.Second)
	io.WriteString(f, call)
	out.WaitFor(t, "[y once/a session/p project/N/?] ", 30*time.Second)
	io.WriteString(f, "?\r")
	out.WaitFor(t, "a, always   run it, and every call of tool createTicket (server shop) in this session without asking (kept with the session: --continue too)", 30*time.Second)
	out.WaitFor(t, "p, project  run it, and allow shop:createTicket in this project from now on", 30*time.Second)
	// Asked again after the help: a runs the call (? was not a no).
	io.WriteString(f, "a\r")
	out.WaitFor(t, "✓ createTicket", 30*time.Second)
	if strings.Contains(out.String(), "did not approve") {
		t.Errorf("? counted as no:\n%s", out.String())
	}
	stop()

	f, out, stop = chat("--continue")
	io.WriteString(f, call)
	out.WaitFor(t, "✓ createTicket", 30*time.Second)
	if strings.Contains(out.String(), "Allow tool createTicket") {
		t.Errorf("after --continue the session asked again:\n%s", out.String())
	}
	stop()

	f, out, stop = chat()
	io.WriteString(f, call)
	out.WaitFor(t, "[y once/a session/p project/N/?] ", 30*time.Second)
	io.WriteString(f, "p\r")
	out.WaitFor(t, "Allowed tool createTicket (server shop) in this project from now on (shop:createTicket in the allow list of ", 30*time.Second)
	out.WaitFor(t, "✓ createTicket", 30*time.Second)
	stop()

	f, out, stop = chat()
	io.WriteString(f, call)
	out.WaitFor(t, "✓ createTicket", 30*time.Second)
	if strings.Contains(out.String(), "Allow tool createTicket") {
		t.Errorf("a new session of the project asked again after p:\n%s", out.String())
	}
	stop()
}
