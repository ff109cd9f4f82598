package mcpclient

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startTSServerNext runs .ci/tsserver-next/server.mjs (the TypeScript SDK v2
// server, stateless, installed by .ci/install-tsserver-next) and returns its
// endpoint. Without the install the test skips, except in CI (CI=true).
func startTSServerNext(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".ci", "tsserver-next"))
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

// Against a TypeScript SDK v2 server (stateless): the bridge speaks
// 2026-07-28, lists and calls its tools, and answers its input-required
// round through the Elicitor (the chat's form); a declined form reaches the
// server, which refuses the refund.
func TestTypeScriptServerNext(t *testing.T) {
	url := startTSServerNext(t)
	el := &formElicitor{}
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url}, WithElicitor(el))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %s with the TypeScript SDK v2 server", v)
	}
	if got, err := adExec(t, adTool(t, b, "add"), `{"a":2,"b":3}`); err != nil || got != "5" {
		t.Errorf("add: %q, %v", got, err)
	}
	got, err := adExec(t, adTool(t, b, "refund"), `{"order":"A-1"}`)
	if err != nil || got != "refunded A-1: damaged" {
		t.Errorf("refund: %q, %v", got, err)
	}
	if len(el.asked) != 1 || el.asked[0] != "ts: Why should order A-1 be refunded?" {
		t.Errorf("forms asked: %q", el.asked)
	}
}

type declineElicitor struct{}

func (declineElicitor) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func TestTypeScriptServerNextDeclined(t *testing.T) {
	url := startTSServerNext(t)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url}, WithElicitor(declineElicitor{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := adExec(t, adTool(t, b, "refund"), `{"order":"A-1"}`)
	if !strings.Contains(got+errText(err), "did not give a reason (decline)") {
		t.Errorf("refund with the form declined: %q, %v", got, err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
