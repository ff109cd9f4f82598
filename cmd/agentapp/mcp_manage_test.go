package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// manageEnv is a fresh user: its own HOME, config and data directories,
// and a project directory to run in.
type manageEnv struct {
	t                     *testing.T
	home, xdg, data, proj string
}

func newManageEnv(t *testing.T) *manageEnv {
	root := t.TempDir()
	e := &manageEnv{t: t, home: filepath.Join(root, "home"), xdg: filepath.Join(root, "xdg"), data: filepath.Join(root, "data"), proj: filepath.Join(root, "proj")}
	for _, d := range []string{e.home, e.proj} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *manageEnv) command(args ...string) *exec.Cmd {
	cmd := exec.Command(agentappBin(e.t), args...)
	cmd.Dir = e.proj
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + e.home, "XDG_CONFIG_HOME=" + e.xdg, "AGENTAPP_DATA_DIR=" + e.data, "TERM=dumb"}
	return cmd
}

// run runs agentapp with args and stdin on a pipe.
func (e *manageEnv) run(stdin string, args ...string) (string, string, int) {
	e.t.Helper()
	cmd := e.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func (e *manageEnv) mustRun(args ...string) string {
	e.t.Helper()
	out, errOut, code := e.run("", args...)
	if code != 0 {
		e.t.Fatalf("agentapp %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// ptyChat runs the chat on a terminal, answers each prompt in turn with
// its reply (prompt and reply pairs), and returns everything it printed.
func (e *manageEnv) ptyChat(pairs ...string) string {
	e.t.Helper()
	cmd := e.command("chat", "--model", "offline")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		e.t.Fatal(err)
	}
	defer ptmx.Close()
	var mu sync.Mutex
	var screen bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	seen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return screen.String()
	}
	from := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		deadline := time.Now().Add(60 * time.Second) // a failure guard, not a timing assertion
		for {
			s := seen()
			if j := strings.Index(s[from:], pairs[i]); j >= 0 {
				from += j + len(pairs[i])
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				e.t.Fatalf("the chat never printed %q; screen:\n%s", pairs[i], s)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := ptmx.Write([]byte(pairs[i+1])); err != nil {
			e.t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			e.t.Errorf("chat: %v\n%s", err, seen())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		e.t.Fatalf("the chat did not exit; screen:\n%s", seen())
	}
	return seen()
}

// TestMCPManageRoundTrip: servers are added to the user and the project
// scope, listed with a live check, shown, approved once on a terminal (the
// second chat does not ask again; a chat without a terminal skips an
// unapproved server and says how to approve it) and removed again.
func TestMCPManageRoundTrip(t *testing.T) {
	e := newManageEnv(t)
	bin := agentappBin(t)
	ts := mcpTestServerBin(t)

	out := e.mustRun("mcp", "add", "--scope", "user", "-e", "GREETING=hi", "tester", "--", ts, "-mode", "normal")
	userFile := filepath.Join(e.xdg, "agentapp", "mcp.json")
	if !strings.Contains(out, "Added MCP server tester to "+userFile+" (user scope)") {
		t.Errorf("add: %s", out)
	}
	out = e.mustRun("mcp", "add-json", "--scope", "project", "shop", `{"command": "`+bin+`", "args": ["serve"], "x-note": "kept"}`)
	projFile := filepath.Join(e.proj, ".mcp.json")
	if !strings.Contains(out, "Added MCP server shop to "+projFile+" (project scope)") {
		t.Errorf("add-json: %s", out)
	}
	for _, p := range []string{userFile, projFile} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", p, err, info.Mode().Perm())
		}
	}
	if _, errOut, code := e.run("", "mcp", "add", "--scope", "project", "shop", "--", "other"); code != 1 || !strings.Contains(errOut, "already has a server named \"shop\"") {
		t.Errorf("adding a name twice: exit %d, %s", code, errOut)
	}

	out = e.mustRun("mcp", "list")
	for _, s := range []string{
		"2 MCP servers (where two name the same server, the first of these wins: --mcp, then --config FILE (or ./agentapp.json), then local (yours, this project), then project (./.mcp.json), then user (yours, every project)):",
		"tester (user): " + ts + " -mode normal — ✓ connected, ",
		"shop (project): " + bin + " serve — not approved yet",
		"user: " + userFile,
		"project: " + projFile,
	} {
		if !strings.Contains(out, s) {
			t.Errorf("list lacks %q:\n%s", s, out)
		}
	}
	out = e.mustRun("mcp", "get", "shop")
	for _, s := range []string{"scope:  project", "file:   " + projFile, `"x-note": "kept"`} {
		if !strings.Contains(out, s) {
			t.Errorf("get lacks %q:\n%s", s, out)
		}
	}

	// Without a terminal nobody can approve: the server is skipped.
	_, errOut, code := e.run("/mcp\n", "chat", "--model", "offline")
	if code != 0 || !strings.Contains(errOut, "agentapp: warning: skipped MCP server shop of "+projFile+": a project's servers run only once you approve them; run agentapp mcp approve shop") {
		t.Errorf("piped chat: exit %d, stderr:\n%s", code, errOut)
	}

	// On a terminal the chat asks once, and remembers.
	screen := e.ptyChat("Allow it? The answer is remembered for this project. [y/N] ", "y\r", "> ", "/exit\r")
	if !strings.Contains(screen, "This project's .mcp.json wants to start MCP server shop: "+bin+" serve") ||
		!strings.Contains(screen, "MCP server shop: connected, 5 tools") || !strings.Contains(screen, "MCP server tester: connected") {
		t.Errorf("first chat:\n%s", screen)
	}
	screen = e.ptyChat("> ", "/exit\r")
	if strings.Contains(screen, "Allow it?") || !strings.Contains(screen, "MCP server shop: connected, 5 tools") {
		t.Errorf("second chat asked again or lacks the server:\n%s", screen)
	}
	if out := e.mustRun("mcp", "list"); !strings.Contains(out, "shop (project): "+bin+" serve — ✓ connected, 5 tools") {
		t.Errorf("list after the approval:\n%s", out)
	}

	// A "no" is remembered too: the next chat neither asks nor starts it.
	e.mustRun("mcp", "add-json", "-s", "project", "other", `{"command": "`+bin+`", "args": ["serve"]}`)
	screen = e.ptyChat("Allow it? The answer is remembered for this project. [y/N] ", "n\r", "> ", "/exit\r")
	if !strings.Contains(screen, "MCP server other not started, and not asked about again") {
		t.Errorf("declining chat:\n%s", screen)
	}
	screen = e.ptyChat("> ", "/exit\r")
	if strings.Contains(screen, "Allow it?") || strings.Contains(screen, "MCP server other: connected") || !strings.Contains(screen, "skipped MCP server other of "+projFile+": you declined it") {
		t.Errorf("the chat after a decline asked again or started the server:\n%s", screen)
	}
	if out := e.mustRun("mcp", "list"); !strings.Contains(out, "other (project): "+bin+" serve — declined (agentapp mcp approve other allows it)") {
		t.Errorf("list after the decline:\n%s", out)
	}
	e.mustRun("mcp", "remove", "other")

	e.mustRun("mcp", "remove", "shop")
	e.mustRun("mcp", "remove", "tester")
	if _, _, code := e.run("", "mcp", "get", "shop"); code != 1 {
		t.Errorf("get after remove: exit %d, want 1", code)
	}
	if out := e.mustRun("mcp", "list"); !strings.Contains(out, "No MCP servers are configured") {
		t.Errorf("list after remove:\n%s", out)
	}
	data, _ := os.ReadFile(projFile)
	if strings.Contains(string(data), "shop") || !strings.Contains(string(data), `"mcpServers": {}`) {
		t.Errorf("project file after remove:\n%s", data)
	}
}

// TestMCPServerByScopedName: a server added with `mcp add` (the local
// scope, under a hashed folder) is used by its name in mcp tools and mcp
// call without --config; an unknown name lists the configured ones and
// suggests the nearest; a project server must be approved first.
func TestMCPServerByScopedName(t *testing.T) {
	e := newManageEnv(t)
	srv := mcpTestServerBin(t)
	e.mustRun("mcp", "add", "everything", "--", srv)
	out := e.mustRun("mcp", "tools", "--server", "everything")
	if !strings.Contains(out, `"name"`) {
		t.Errorf("mcp tools --server everything printed no tools:\n%s", out)
	}
	out, errOut, code := e.run("", "mcp", "tools", "--server", "everythin")
	if code != 2 || !strings.Contains(errOut, "configured here: everything") || !strings.Contains(errOut, `did you mean "everything"?`) {
		t.Errorf("an unknown name: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	e.mustRun("mcp", "add", "--scope", "project", "shared", "--", srv)
	_, errOut, code = e.run("", "mcp", "tools", "--server", "shared")
	if code != 2 || !strings.Contains(errOut, "agentapp mcp approve shared") {
		t.Errorf("an unapproved project server: exit %d, stderr:\n%s", code, errOut)
	}
	e.mustRun("mcp", "approve", "shared")
	e.mustRun("mcp", "tools", "--server", "shared")
}

// TestMCPListCountsTheChatsTools: mcp list connects with the chat's
// capabilities, so a server that offers some tools only to a client that
// can sample, elicit or list roots (server-everything) shows the count the
// chat's banner shows (it showed 13 where the chat had 19).
func TestMCPListCountsTheChatsTools(t *testing.T) {
	e := newManageEnv(t)
	e.mustRun("mcp", "add", "everything", "--", everythingBin(t))
	out := e.mustRun("mcp", "list", "--json")
	var doc struct {
		Servers []struct {
			Name  string
			Tools *int
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("mcp list --json: %v\n%s", err, out)
	}
	list := doc.Servers
	if len(list) != 1 || list[0].Tools == nil {
		t.Fatalf("mcp list --json:\n%s", out)
	}
	banner, _, code := e.run("/exit\n", "chat", "--model", "offline")
	if code != 0 {
		t.Fatalf("chat: exit %d\n%s", code, banner)
	}
	want := fmt.Sprintf("MCP server everything: connected, %d tools", *list[0].Tools)
	if !strings.Contains(banner, want) {
		t.Errorf("mcp list counts %d tools; the chat's banner:\n%s", *list[0].Tools, banner)
	}
}
