package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeProcessors checks from outside, through the runtime's scheduler
// trace, that a stdio server runs on one processor unless GOMAXPROCS is
// set, and that the HTTP server keeps the processors it started with.
func TestServeProcessors(t *testing.T) {
	bin := agentappBin(t)
	for _, tc := range []struct {
		name string
		args []string
		env  []string
		want func(first int) int // the processors expected once serving, given those at start
	}{
		{"stdio", []string{"serve"}, nil, func(int) int { return 1 }},
		{"stdio with GOMAXPROCS=2", []string{"serve"}, []string{"GOMAXPROCS=2"}, func(int) int { return 2 }},
		{"http", []string{"serve", "--http", "127.0.0.1:0"}, nil, func(first int) int { return first }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "GODEBUG=schedtrace=20")
			cmd.Env = append(cmd.Env, tc.env...)
			stdin, err := cmd.StdinPipe() // held open: the stdio server serves until EOF
			if err != nil {
				t.Fatal(err)
			}
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				stdin.Close()
				cmd.Process.Kill()
				cmd.Wait()
			}()
			// The trace's first line is written before main runs; the
			// banner comes once the server is built, so a trace line after
			// it shows the processors the server runs on.
			procsRE := regexp.MustCompile(`^SCHED \d+ms: gomaxprocs=(\d+) `)
			type result struct{ first, serving int }
			done := make(chan result, 1)
			go func() {
				sc := bufio.NewScanner(stderr)
				first, banner := 0, false
				for sc.Scan() {
					line := sc.Text()
					m := procsRE.FindStringSubmatch(line)
					switch {
					case m == nil:
						banner = banner || strings.Contains(line, "MCP server on")
					case first == 0:
						first, _ = strconv.Atoi(m[1])
					case banner:
						n, _ := strconv.Atoi(m[1])
						done <- result{first, n}
						io.Copy(io.Discard, stderr)
						return
					}
				}
				done <- result{first, 0}
			}()
			select {
			case r := <-done:
				if r.first <= 0 || r.serving <= 0 {
					t.Fatalf("no scheduler trace before and after the banner (first %d, serving %d)", r.first, r.serving)
				}
				if want := tc.want(r.first); r.serving != want {
					t.Fatalf("serving on %d processors (started with %d), want %d", r.serving, r.first, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no scheduler trace line after the banner within 30 s")
			}
		})
	}
}
