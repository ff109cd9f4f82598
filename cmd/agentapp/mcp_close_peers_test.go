package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPCallEverythingQuiet (issue 44, point 10): `agentapp mcp call echo`
// against server-everything started as `node …/dist/index.js stdio`
// answers and closes with nothing on stderr: no SIGTERM or kill warning
// from the close sequence (the server exits on stdin EOF). The close's own
// time is held by mcpclient's TestEverythingClosesOnEOF.
func TestMCPCallEverythingQuiet(t *testing.T) {
	entry, err := filepath.EvalSymlinks(everythingBin(t))
	if err != nil {
		t.Fatal(err)
	}
	bin := agentappBin(t)
	cmd := exec.Command(bin, "mcp", "call", "echo", `{"message":"hi"}`, "--", "node", entry, "stdio")
	cmd.Env = append(withoutOTEL(os.Environ()), "XDG_CONFIG_HOME="+t.TempDir(), "AGENTAPP_DATA_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	t.Logf("mcp call took %v", time.Since(start))
	if err != nil || !strings.Contains(string(out), "Echo: hi") {
		t.Fatalf("mcp call echo: %v\n%s\n%s", err, out, stderr.Bytes())
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr is not empty:\n%s", stderr.Bytes())
	}
}
