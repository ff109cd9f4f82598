package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// runServeCLI runs `agentapp serve` in-process with args and returns its
// stderr and error. It is for start-up failures: a serve that starts
// anyway is stopped after a few seconds and returns nil.
func runServeCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t.Setenv("GOGC", "100") // leave the test binary's collector alone
	root := newRootCmd()
	var out, errOut testkit.SyncBuffer // commands write from goroutines of their own
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append([]string{"serve"}, args...))
	err := root.ExecuteContext(ctx)
	if out.String() != "" {
		t.Errorf("serve wrote %q to stdout", out.String())
	}
	return errOut.String(), err
}

// noDataDir fails the test if dir was created.
func noDataDir(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("serve failed at start-up but left the data directory %s (stat: %v)", dir, err)
	}
}

// TestServeListensBeforeOpeningData checks that a port already in use
// fails serve before the data directory is created and seeded.
func TestServeListensBeforeOpeningData(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := filepath.Join(t.TempDir(), "data")
	_, err = runServeCLI(t, "--http", taken.Addr().String(), "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "cannot listen on "+taken.Addr().String()) {
		t.Fatalf("serve on a port in use: %v, want a listen error naming the address", err)
	}
	noDataDir(t, dir)
}

// TestServeRefusesBlankToken checks that a token of white space, from
// the flag or the environment, is a start-up error and not a server that
// refuses every client.
func TestServeRefusesBlankToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(serverTokenEnv, "")
	_, err := runServeCLI(t, "--http", "127.0.0.1:0", "--token", "  ", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "only white space") {
		t.Fatalf("--token of spaces: %v, want an error about the blank token", err)
	}
	t.Setenv(serverTokenEnv, " \t ")
	_, err = runServeCLI(t, "--http", "127.0.0.1:0", "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "AGENTAPP_SERVER_TOKEN") {
		t.Fatalf("%s of white space: %v, want an error naming it", serverTokenEnv, err)
	}
	noDataDir(t, dir)
}
