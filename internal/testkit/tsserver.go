package testkit

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// StartTSServerNext runs server.mjs of dir, the .ci/tsserver-next folder
// (the TypeScript SDK v2 server, stateless; .ci/install-tsserver-next
// installs it), until the test ends, and returns its endpoint. Without the
// install the test skips, except in CI (CI=true).
func StartTSServerNext(t testing.TB, dir string) string {
	t.Helper()
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server", "package.json")); err != nil || nodeErr != nil {
		msg := "the TypeScript SDK v2 server is not installed; run `bash .ci/install-tsserver-next` (needs node and npm)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command(node, "server.mjs")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = stdin.Close() // the server exits at the end of its stdin
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l := <-line:
		url, ok := strings.CutPrefix(l, "listening ")
		if !ok {
			t.Fatalf("tsserver-next said %q, want its address", l)
		}
		return url
	case <-time.After(20 * time.Second):
		t.Fatal("tsserver-next did not start within 20 s")
	}
	return ""
}
