//go:build unix

package mcpclient

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
)

// startEverythingSSE runs server-everything in its legacy SSE mode on a
// free port and returns the URL of its event stream. The server and its
// process group are stopped when the test ends.
func startEverythingSSE(t *testing.T) string {
	t.Helper()
	bin := peerBin(t, "mcp-server-everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "sse")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	cmd.Dir = t.TempDir()
	out := &testkit.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	out.WaitFor(t, "running on port", 30*time.Second)
	return fmt.Sprintf("http://127.0.0.1:%d/sse", port)
}

func callEcho(t *testing.T, b *Bridge) {
	t.Helper()
	wantTools(t, b, "echo", "get-sum")
	var echo = b.Tools()[0]
	for _, tl := range b.Tools() {
		if tl.Name == "echo" {
			echo = tl
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := echo.Execute(ctx, []byte(`{"message":"over sse"}`))
	if err != nil {
		t.Fatalf("echo over SSE: %v", err)
	}
	s, err := agent.FormatOutput(out)
	if err != nil || !strings.Contains(s, "over sse") {
		t.Errorf("echo over SSE answered %q", s)
	}
}

// TestPeerEverythingSSEFromConfig: "type": "sse" in a config file reaches a
// legacy server: tools listed, a call answered over the event stream.
func TestPeerEverythingSSEFromConfig(t *testing.T) {
	url := startEverythingSSE(t)
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"legacy":{"type":"sse","url":"`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	servers, err := mcpconfig.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(servers) != 1 || servers[0].Transport != mcpconfig.TransportSSE {
		t.Fatalf("config gave %+v, want one SSE server", servers)
	}
	b := connectPeer(t, servers[0])
	callEcho(t, b)
}

// TestPeerEverythingSSEBareURL: a URL without a type is tried with
// streamable HTTP, which the legacy server refuses, then with SSE; with
// "type": "http" it is not, and the error says what failed.
func TestPeerEverythingSSEBareURL(t *testing.T) {
	url := startEverythingSSE(t)
	b := connectPeer(t, mcpconfig.Server{Name: "legacy", URL: url})
	callEcho(t, b)
	if !b.legacy.Load() {
		t.Error("the bridge did not record that the server is a legacy one")
	}

	_, err := Connect(context.Background(), mcpconfig.Server{Name: "strict", URL: url, Transport: mcpconfig.TransportHTTP, ConnectTimeout: 10 * time.Second})
	if err == nil {
		t.Fatal("type http connected to a legacy SSE server")
	}
	if !strings.Contains(err.Error(), "strict") || !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), `set "type": "sse"`) {
		t.Errorf("error %q does not name the server and its URL", err)
	}
}
