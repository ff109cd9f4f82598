package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// maxPackageInitBytes bounds what one agentapp package may allocate in its
// package initialisation. Every `agentapp serve` a client spawns pays for
// every package linked in, before it can answer initialize; work that only
// some commands need (a large regexp, a parsed table) belongs behind a
// sync.Once at its first use. The largest today (web, assistant,
// toolsearch) are under 20 KB; main, mcpclient and internal/redact were
// 40-46 KB each, their regexps, before those moved to first use.
const maxPackageInitBytes = 32 << 10

// TestPackageInitIsSmall runs the agentapp binary with
// GODEBUG=inittrace=1, which prints the bytes each package's init
// allocated, and fails for an agentapp package above maxPackageInitBytes.
// Bytes allocated are the same on every run, unlike the clock time.
func TestPackageInitIsSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentappBin(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("agentapp version with GODEBUG=inittrace=1: %v\nstdout: %s\nstderr: %.2000s", err, out, stderr.String())
	}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(stderr.Bytes()))
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		seen++
		if f[1] != "main" && !strings.HasPrefix(f[1], "github.com/agentapp/agentapp/") {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: bytes %q: %v", sc.Text(), f[7], err)
		}
		if n > maxPackageInitBytes {
			t.Errorf("package %s allocates %d bytes at init (%s allocs), more than %d: every serve start pays for it; compile or build it on first use (sync.OnceValue)",
				f[1], n, f[9], maxPackageInitBytes)
		}
	}
	if seen < 10 {
		t.Fatalf("GODEBUG=inittrace=1 printed %d init lines, want many; stderr: %.2000s", seen, stderr.String())
	}
}
