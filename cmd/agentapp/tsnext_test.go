package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestTypeScriptClientNext: the TypeScript SDK v2 client
// (@modelcontextprotocol/client, .ci/tsclient-next), its version pinned to
// 2026-07-28 with no fallback, calls agentapp serve over stdio and over
// HTTP with default flags, including a refund without a reason, which the
// server asks for in an input_required round.
func TestTypeScriptClientNext(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", ".ci", "tsclient-next"))
	if err != nil {
		t.Fatal(err)
	}
	node, nerr := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client", "package.json")); err != nil || nerr != nil {
		msg := "the TypeScript SDK v2 client or node is not installed; run bash .ci/install-tsclient-next"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	bin := agentappBin(t)
	drive := func(t *testing.T, env []string, args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "drive.mjs")}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("drive.mjs %v: %v\n%s", args, err, stderr.String())
		}
		var got struct {
			Protocol string
			Tools    []string
			Order    map[string]any
			Refund   map[string]any
			Asked    string
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("drive.mjs printed %q: %v", out, err)
		}
		if got.Protocol != "2026-07-28" || len(got.Tools) != 5 || got.Order["orderId"] != "A-1024" {
			t.Errorf("protocol %s, tools %v, order %v", got.Protocol, got.Tools, got.Order)
		}
		if got.Refund["reason"] != "arrived broken" || got.Refund["status"] != "pending" || !strings.Contains(got.Asked, "refund") {
			t.Errorf("refund without a reason: filed %v after asking %q; want the user's reason", got.Refund, got.Asked)
		}
	}
	t.Run("stdio", func(t *testing.T) {
		drive(t, []string{"AGENTAPP_DATA_DIR=" + t.TempDir()}, "stdio", bin)
	})
	t.Run("http", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_SERVER_TOKEN=")
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
		addr := regexp.MustCompile(`MCP server on (http://127\.0\.0\.1:[1-9][0-9]*/mcp)`)
		sc := bufio.NewReader(pipe)
		for {
			line, err := sc.ReadString('\n')
			if err != nil {
				t.Fatalf("serve printed no address: %v", err)
			}
			if m := addr.FindStringSubmatch(line); m != nil {
				go io.Copy(io.Discard, sc)
				drive(t, nil, "http", m[1])
				return
			}
		}
	})
}
