package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatStartsWithoutBrokenServer: a config with one good server (agentapp
// serve) and one that cannot start, run as a real subprocess. The chat
// starts, the banner and /mcp show the broken one as failed with its
// reason, the good one's tools answer; --strict-mcp refuses to start; -p
// answers and exits 3.
func TestChatStartsWithoutBrokenServer(t *testing.T) {
	bin := agentappBin(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-server")
	cfg := filepath.Join(dir, "servers.json")
	conf := `{"mcpServers": {
		"good": {"command": "` + bin + `", "args": ["serve"]},
		"broken": {"command": "` + missing + `"},
		"parked": {"command": "whatever", "disabled": true}
	}}`
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		data := t.TempDir()
		cmd := exec.Command(bin, append([]string{"chat", "--model", "offline", "--config", cfg}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data}
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := run("订单 A-1024 到哪了？\n/mcp\n/exit\n")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, s := range []string{
		"MCP server good: connected, 5 tools",
		"MCP server broken: failed: ",
		"MCP server parked: disabled in " + cfg,
		"已发货",
		"3 MCP servers:",
		"  broken: failed: ",
		"check it by hand: agentapp mcp tools -- " + missing,
		"    try it again with /mcp restart broken",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if !strings.Contains(errOut, "agentapp: warning: MCP server broken failed to connect (command not found: "+missing) || !strings.Contains(errOut, "); the chat starts without it") {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}

	_, errOut, code = run("", "--strict-mcp")
	if code != 1 || !strings.Contains(errOut, "could not start the chat: an MCP server failed to connect") || !strings.Contains(errOut, "broken") {
		t.Errorf("--strict-mcp: exit %d, want 1; stderr:\n%s", code, errOut)
	}

	out, errOut, code = run("", "-p", "订单 A-1024 到哪了？")
	if code != exitServerFailed || !strings.Contains(out, "已发货") || !strings.Contains(errOut, "answered without MCP server broken") {
		t.Errorf("-p: exit %d, want %d; stdout %q\nstderr:\n%s", code, exitServerFailed, out, errOut)
	}
	// The JSON answer says which servers were missing, and why.
	out, _, code = run("", "-p", "订单 A-1024 到哪了？", "--output-format", "json")
	var a struct {
		Unavailable []struct{ Name, State, Reason string } `json:"unavailable_servers"`
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil || code != exitServerFailed || len(a.Unavailable) != 2 ||
		a.Unavailable[0].Name != "broken" || a.Unavailable[0].State != "failed" || !strings.Contains(a.Unavailable[0].Reason, missing) ||
		a.Unavailable[1].Name != "parked" || a.Unavailable[1].State != "disabled" {
		t.Errorf("json: exit %d, err %v, %+v\n%s", code, err, a.Unavailable, out)
	}
}

// TestChatShowsWhyServerFailed: a configured server that prints why it
// cannot start on stderr and exits 1. The banner shows the decisive line
// (not only "EOF"), /mcp the whole reason with the stderr tail, and -p,
// which has no /mcp, the line and the command that shows more.
func TestChatShowsWhyServerFailed(t *testing.T) {
	bin := agentappBin(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "db-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho 'starting the db server' >&2\necho 'FATAL: DATABASE_URL is not set' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "servers.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"db": {"command": "`+script+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		data := t.TempDir()
		cmd := exec.Command(bin, append([]string{"chat", "--model", "offline", "--config", cfg}, args...)...)
		cmd.Dir = t.TempDir()
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data}
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := run("/mcp\n/exit\n")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	banner, mcpOut, _ := strings.Cut(out, "1 MCP server:\n")
	// initialize fails with EOF, or with a broken pipe when the server had
	// exited before the request was written.
	if !strings.Contains(banner, "MCP server db: failed: ") || !strings.Contains(banner, `calling "initialize": `) ||
		!strings.Contains(banner, " — its stderr says: FATAL: DATABASE_URL is not set\n") {
		t.Errorf("the banner lacks the decisive stderr line:\n%s", banner)
	}
	for _, s := range []string{
		"  db: failed: ",
		"\n    its stderr says: FATAL: DATABASE_URL is not set\n",
		"\n      starting the db server\n", // the tail too: /mcp is the detail
		"    try it again with /mcp restart db\n",
	} {
		if !strings.Contains(mcpOut, s) {
			t.Errorf("/mcp lacks %q:\n%s", s, mcpOut)
		}
	}
	if !strings.Contains(errOut, "its stderr says: FATAL: DATABASE_URL is not set); the chat starts without it (see /mcp,") {
		t.Errorf("the start-up warning lacks the reason or /mcp:\n%s", errOut)
	}

	out, errOut, code = run("", "-p", "订单 A-1024 到哪了？")
	want := "agentapp: answered without MCP server db (its stderr says: FATAL: DATABASE_URL is not set; see why with agentapp mcp get db --config " + cfg + "), which did not connect"
	if code != exitServerFailed || !strings.Contains(out, "已发货") || !strings.Contains(errOut, want) {
		t.Errorf("-p: exit %d, want %d; stdout %q\nstderr lacks %q:\n%s", code, exitServerFailed, out, want, errOut)
	}
	if strings.Contains(errOut, "/mcp") {
		t.Errorf("-p points to /mcp, which one-shot mode does not have:\n%s", errOut)
	}
}

// TestChatFailedServerNamesCheckOnce: the warnings about a server that did
// not connect name the command that checks it once, not twice ("check it by
// hand: X" inside "see why with X").
func TestChatFailedServerNamesCheckOnce(t *testing.T) {
	chatEnv(t)
	t.Setenv("AGENTAPP_DATA_DIR", t.TempDir())
	_, errOut, code := runChatCLI(t, "", "chat", "--model", "offline", "--mcp", "broken=sh -c 'exit 3'", "-p", "订单 A-1024 到哪了？")
	if code != exitServerFailed {
		t.Fatalf("exit %d, want %d:\n%s", code, exitServerFailed, errOut)
	}
	for _, line := range strings.Split(errOut, "\n") {
		if n := strings.Count(line, "agentapp mcp tools -- sh -c"); n > 1 || strings.Count(line, "check it by hand") > 0 && strings.Contains(line, "see why with") {
			t.Errorf("a line names the check twice:\n%s", line)
		}
	}
	if !strings.Contains(errOut, "see why with agentapp mcp tools -- sh -c") {
		t.Errorf("no line names the check:\n%s", errOut)
	}
}
