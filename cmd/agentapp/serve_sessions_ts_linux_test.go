package main

import (
	"bytes"
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestServeHTTPManyTSSessions (issue 43, item 3): 16 sessions of the
// official TypeScript SDK client from one loopback address, each making
// 2 calls at once for 20 rounds (about 80 connections at the peak), against
// `agentapp serve --http` with the default flags: every call is served. Before, the per-address bound (32
// connections) refused some with "503 … your address already has 32
// connections open": each session holds its GET stream and its POSTs, and
// on loopback every local client shares the one address.
func TestServeHTTPManyTSSessions(t *testing.T) {
	sdk, node := tsSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	srv := exec.CommandContext(ctx, agentappBin(t), "serve", "--http", addr, "--data-dir", t.TempDir())
	srvErr := &cappedBuffer{}
	srv.Stderr = srvErr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		srv.Wait()
	})
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("serve --http did not listen on %s: %v\n%s", addr, err, srvErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "ts_sessions_client.mjs"), sdk, "http://"+addr+"/mcp", "16", "20", "2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the TypeScript clients: %v\nstdout %s\nstderr %s\nserver:\n%s", err, out, stderr.Bytes(), tail(srvErr.String(), 2000))
	}
	t.Logf("%s", bytes.TrimSpace(out))
}
