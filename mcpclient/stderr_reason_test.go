//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
)

// failingServer writes a shell script that prints stderr and exits 1
// before it answers initialize, as a server with a missing setting does.
func failingServer(t *testing.T, name, stderr string) mcpconfig.Server {
	t.Helper()
	dir := t.TempDir()
	msg := filepath.Join(dir, "stderr.txt")
	if err := os.WriteFile(msg, []byte(stderr), 0o600); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat "+msg+" >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return mcpconfig.Server{Name: name, Command: script, ConnectTimeout: 20 * time.Second}
}

func connectErr(t *testing.T, cfg mcpconfig.Server) *ConnectError {
	t.Helper()
	_, err := Connect(context.Background(), cfg)
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("Connect: %v (%T), want a *ConnectError", err, err)
	}
	return ce
}

// TestConnectErrorKeepsDecisiveStderr: the line that says why a server
// failed is kept even when a long stack trace follows it, and is the
// first thing the error shows after the headline.
func TestConnectErrorKeepsDecisiveStderr(t *testing.T) {
	var stack strings.Builder
	stack.WriteString("node:internal/modules/esm/resolve:854\n  throw new ERR_MODULE_NOT_FOUND(packageName, fileURLToPath(base), null);\n        ^\n\n")
	stack.WriteString("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'left-pad' imported from /srv/app/index.mjs\n")
	for i := range 14 {
		stack.WriteString("    at frame" + string(rune('a'+i)) + " (node:internal/modules/esm/resolve:1)\n")
	}
	stack.WriteString("{\n  code: 'ERR_MODULE_NOT_FOUND'\n}\n\nNode.js v20.19.0\n")
	for _, tc := range []struct {
		name, stderr string
		want         []string
	}{
		{"node", stack.String(), []string{"Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'left-pad' imported from /srv/app/index.mjs"}},
		{"fatal", "starting db-server 1.2\nFATAL: DATABASE_URL is not set\n", []string{"FATAL: DATABASE_URL is not set"}},
		{"python", "Traceback (most recent call last):\n  File \"/srv/s.py\", line 1, in <module>\n    import requests\nModuleNotFoundError: No module named 'requests'\n",
			[]string{"ModuleNotFoundError: No module named 'requests'"}},
		{"two", "error: config.toml: no such key\nwarming up\nRuntimeError: cannot continue\n",
			[]string{"error: config.toml: no such key", "RuntimeError: cannot continue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ce := connectErr(t, failingServer(t, tc.name, tc.stderr))
			if !slices.Equal(ce.StderrErrors, tc.want) {
				t.Errorf("StderrErrors = %q, want %q", ce.StderrErrors, tc.want)
			}
			if got := FailureReason(ce); !slices.Equal(got, tc.want) {
				t.Errorf("FailureReason = %q, want %q", got, tc.want)
			}
			if len(ce.StderrTail) == 0 || len(ce.StderrTail) > stderrTailShown {
				t.Errorf("StderrTail has %d lines, want 1..%d", len(ce.StderrTail), stderrTailShown)
			}
			msg := ce.Error()
			lines := strings.Split(msg, "\n")
			if len(lines) < 2 || lines[1] != "its stderr says: "+tc.want[0] {
				t.Errorf("the decisive line is not the second line of the message:\n%s", msg)
			}
			if !strings.Contains(ce.headline(), "failed during initialize") || strings.Contains(ce.headline(), "\n") {
				t.Errorf("Headline = %q", ce.headline())
			}
		})
	}
}

// TestConnectErrorNoErrorLine: without an error-looking line, the reason
// is the last line the server wrote.
func TestConnectErrorNoErrorLine(t *testing.T) {
	ce := connectErr(t, failingServer(t, "quiet", "usage: srv --db URL\n\n"))
	if ce.StderrErrors != nil {
		t.Errorf("StderrErrors = %q, want none", ce.StderrErrors)
	}
	if got := FailureReason(ce); !slices.Equal(got, []string{"usage: srv --db URL"}) {
		t.Errorf("FailureReason = %q", got)
	}
	if FailureReason(errors.New("other")) != nil {
		t.Error("FailureReason of a non-connect error is not nil")
	}
}

// TestConnectErrorNodeImport runs a real Node ESM module whose import
// fails: the line naming the missing package must be in the error,
// although Node prints a stack of more than ten lines after it.
func TestConnectErrorNodeImport(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "server.mjs")
	if err := os.WriteFile(mod, []byte("import x from 'agentapp-no-such-package';\nconsole.log(x);\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ce := connectErr(t, mcpconfig.Server{Name: "esm", Command: node, Args: []string{mod}, ConnectTimeout: 30 * time.Second})
	reason := strings.Join(FailureReason(ce), "\n")
	if !strings.Contains(reason, "Cannot find package 'agentapp-no-such-package'") {
		t.Errorf("FailureReason = %q; error:\n%s", reason, ce)
	}
	if !strings.Contains(ce.Error(), "its stderr says: Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'agentapp-no-such-package'") {
		t.Errorf("error:\n%s", ce)
	}
}
