//go:build unix

package testkit

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// StartHTTPPeer runs command (a third-party MCP server in its streamable
// HTTP mode) in a process group of its own with PORT set to a free
// loopback port, waits until a line on its stderr contains ready, and
// returns the base URL "http://127.0.0.1:PORT". The whole group is killed
// and reaped when the test ends, so no server outlives it.
func StartHTTPPeer(t testing.TB, ready string, command string, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(command, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	type outcome struct {
		ok  bool
		out string
	}
	found := make(chan outcome, 1)
	go func() {
		var seen []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ready) {
				found <- outcome{ok: true}
				for sc.Scan() { // keep the pipe drained
				}
				return
			}
			if len(seen) < 20 {
				seen = append(seen, sc.Text())
			}
		}
		found <- outcome{out: strings.Join(seen, "\n")}
	}()
	select {
	case o := <-found:
		if !o.ok {
			t.Fatalf("%s exited before it was ready; its stderr:\n%s", command, o.out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not print %q within 30s", command, ready)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
