//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

func filesystemBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "peers", "node_modules", ".bin", "mcp-server-filesystem"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("server-filesystem is not installed; run bash .ci/install-peers")
		}
		t.Skip("server-filesystem is not installed; run bash .ci/install-peers (needs node and npm)")
	}
	return p
}

// TestPermissionsFilesystemOnATerminal: by default the chat asks before
// server-filesystem's write_file, which its server does not declare
// read-only, and runs read_file, which it declares read-only, without
// asking (issue 30 item 2). A "no" leaves the file unwritten; a "yes"
// writes it.
func TestPermissionsFilesystemOnATerminal(t *testing.T) {
	bin := filesystemBin(t)
	data, root := t.TempDir(), t.TempDir()
	cmd := exec.Command(agentappBin(t), "chat", "--model", "offline", "--mcp", "files="+bin+" "+root)
	cmd.Dir = root // the chat offers its working directory as the root, which the server then serves
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data, "TERM=dumb", "NO_COLOR=1"}
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		io.WriteString(f, "/exit\r")
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			t.Error("the chat did not exit")
		}
	}()
	out := &testkit.SyncBuffer{}
	go io.Copy(out, f)
	out.WaitFor(t, "Type a message.", 60*time.Second)
	if !strings.Contains(out.String(), "Guards: permissions: ask before MCP tools not declared read-only") {
		t.Errorf("the banner does not state the permission policy:\n%s", out.String())
	}
	target := filepath.Join(root, "note.txt")

	io.WriteString(f, `/call write_file {"path":"`+target+`","content":"first"}`+"\r")
	out.WaitFor(t, `Allow tool write_file (server files) with {"path":"`+target+`","content":"first"}? [y once/a session/p project/N/?] `, 30*time.Second)
	io.WriteString(f, "n\r")
	out.WaitFor(t, "the user did not approve the call to tool write_file", 30*time.Second)
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("write_file ran although the user said no: %v", err)
	}

	io.WriteString(f, `/call write_file {"path":"`+target+`","content":"second"}`+"\r")
	out.WaitFor(t, `"content":"second"}? [y once/a session/p project/N/?] `, 30*time.Second)
	io.WriteString(f, "y\r")
	out.WaitFor(t, "Successfully wrote", 30*time.Second)
	if b, err := os.ReadFile(target); err != nil || string(b) != "second" {
		t.Fatalf("after yes the file holds %q, %v; want second", b, err)
	}

	io.WriteString(f, `/call read_file {"path":"`+target+`"}`+"\r")
	out.WaitFor(t, `"content": "second"`, 30*time.Second)
	if strings.Contains(out.String(), "Allow tool read_file") {
		t.Errorf("read_file, declared read-only, was asked about:\n%s", out.String())
	}
}

// TestPermissionsOneShotDoesNotHang: -p with stdin not a terminal has
// nobody to ask, so write_file is refused at once with the flags that
// allow it named, and exits 4; --allow and --permission-mode allow-all let
// it run; --deny refuses it even in allow-all mode.
func TestPermissionsOneShotDoesNotHang(t *testing.T) {
	bin := filesystemBin(t)
	data, root := t.TempDir(), t.TempDir()
	target := filepath.Join(root, "out.txt")
	run := func(extra ...string) (string, string, int) {
		t.Helper()
		// The offline model calls the tool the message names, with the
		// arguments in the message's JSON.
		args := append([]string{"chat", "--model", "offline", "--mcp", "files=" + bin + " " + root,
			"-p", `use write_file {"path":"` + target + `","content":"x"}`}, extra...)
		return runBounded(t, root, []string{"HOME=" + data, "AGENTAPP_DATA_DIR=" + data}, "", args...)
	}
	_, stderr, code := run()
	if code != exitRefused || !strings.Contains(stderr, "tool write_file (server files) needs confirmation but stdin is not a terminal: refused; allow it with --allow files:write_file, or run with --permission-mode allow-all") {
		t.Fatalf("default -p: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("write_file ran without approval: %v", err)
	}
	for _, flags := range [][]string{{"--allow", "files:write_file"}, {"--allow", "files:*"}, {"--permission-mode", "allow-all"}} {
		os.Remove(target)
		if _, stderr, code := run(flags...); code != 0 {
			t.Fatalf("%v: exit %d, stderr:\n%s", flags, code, stderr)
		}
		if _, err := os.Stat(target); err != nil {
			t.Errorf("%v: write_file did not run: %v", flags, err)
		}
	}
	os.Remove(target)
	stdout, stderr, code := run("--permission-mode", "allow-all", "--deny", "files:write_file")
	if code != exitRefused || !strings.Contains(stdout, `the user's permission policy denies tool write_file (server files) (the rule \"deny files:write_file\" of --deny denies it)`) &&
		!strings.Contains(stdout, `the user's permission policy denies tool write_file (server files) (the rule "deny files:write_file" of --deny denies it)`) {
		t.Fatalf("--deny in allow-all mode: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a denied write_file ran: %v", err)
	}
}

// runBounded runs the agentapp binary in dir with env added to a clean
// environment and stdin (not a terminal), and fails the test if it has
// not finished within two minutes: a question nobody can answer must not
// hold -p.
func runBounded(t *testing.T, dir string, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agentappBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.WaitDelay = 10 * time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("agentapp %q did not finish within 2 minutes (a question waiting for an answer?); stderr:\n%s", args, errOut.String())
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestPermissionsFromConfigFiles: a --config file's deny holds (its rule
// is named as the reason); a project .mcp.json cannot allow (its allow is
// ignored with a warning saying where the user can put it), though it can
// deny; a user file naming a server nobody configured stops the start,
// naming the file's rule and the nearest server.
func TestPermissionsFromConfigFiles(t *testing.T) {
	bin := filesystemBin(t)
	data, root := t.TempDir(), t.TempDir()
	target := filepath.Join(root, "out.txt")
	env := []string{"HOME=" + data, "AGENTAPP_DATA_DIR=" + data, "XDG_CONFIG_HOME=" + filepath.Join(data, "xdg")}
	write := func(path, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := func(extra ...string) []string {
		return append([]string{"chat", "--model", "offline", "--mcp", "files=" + bin + " " + root,
			"-p", `use write_file {"path":"` + target + `","content":"x"}`}, extra...)
	}

	// The project's allow is ignored: write_file is still asked about
	// (and refused on a pipe).
	project := filepath.Join(root, ".mcp.json")
	write(project, `{"permissions": {"allow": ["files:*"]}}`)
	_, stderr, code := runBounded(t, root, env, "", args()...)
	if code != exitRefused || !strings.Contains(stderr, project+" allows files:*, but a project file may only ask or deny, so it is ignored; to allow it, put the rule in your local scope file") ||
		!strings.Contains(stderr, "or --allow files:*") {
		t.Fatalf("project allow: exit %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("write_file ran on the project's allow: %v", err)
	}

	// The project's deny holds even in allow-all mode.
	write(project, `{"permissions": {"deny": ["files:write_file"]}}`)
	stdout, stderr, code := runBounded(t, root, env, "", args("--permission-mode", "allow-all")...)
	if code != exitRefused || !strings.Contains(stdout, "permission policy denies tool write_file (server files)") || !strings.Contains(stdout, "(project scope)") {
		t.Fatalf("project deny: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	os.Remove(project)

	// A --config file's deny.
	cfg := filepath.Join(data, "agent.json")
	write(cfg, `{"mcpServers": {}, "permissions": {"deny": ["write_file"]}}`)
	stdout, stderr, code = runBounded(t, root, env, "", args("--config", cfg, "--allow", "files:*")...)
	if code != exitRefused || !strings.Contains(stdout, "deny write_file") || !strings.Contains(stdout, cfg+" (file scope)") {
		t.Fatalf("--config deny: exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a denied write_file ran: %v", err)
	}

	// A user-file rule naming no configured server stops the start.
	user := filepath.Join(data, "xdg", "agentapp", "mcp.json")
	write(user, `{"permissions": {"ask": ["file:*"]}}`)
	_, stderr, code = runBounded(t, root, env, "", args()...)
	if code == 0 || !strings.Contains(stderr, `the rule "ask file:*" of `+user+` (user scope) names MCP server "file", but no server of that name is configured; did you mean "files"?`) {
		t.Fatalf("unknown server in the user file: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestPermissionsUnknownNamesFailClosed: AGENT_GUARD_CONFIRM and the
// permission flags fail the start when they name nothing, naming the entry
// and the nearest name; a bad pattern or mode is a usage error.
func TestPermissionsUnknownNamesFailClosed(t *testing.T) {
	data := t.TempDir()
	env := []string{"HOME=" + data, "AGENTAPP_DATA_DIR=" + data}
	cases := []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{[]string{guard.EnvConfirm + "=creatTicket"}, nil, 1, `AGENT_GUARD_CONFIRM names "creatTicket", but no local tool or MCP server tool has that name; did you mean "createTicket"?`},
		{nil, []string{"--deny", "memory:*"}, 1, `the rule "deny memory:*" of --deny names MCP server "memory", but no server of that name is configured`},
		{nil, []string{"--allow", "files:wr*"}, 2, `--allow: permission pattern "files:wr*": * stands only for a whole server or every tool`},
		{nil, []string{"--permission-mode", "yolo"}, 2, `--permission-mode: unknown permission mode "yolo"`},
	}
	for _, c := range cases {
		args := append([]string{"chat", "--model", "offline", "-p", "hi"}, c.args...)
		_, stderr, code := runBounded(t, t.TempDir(), append(env, c.env...), "", args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v %v: exit %d, stderr:\n%s\nwant exit %d and %q", c.env, c.args, code, stderr, c.code, c.want)
		}
	}
	// A server that is configured but did not start: a warning, and the
	// chat answers (exit 3 says the server failed).
	_, stderr, code := runBounded(t, t.TempDir(), env, "", "chat", "--model", "offline", "-p", "hi", "--mcp", "broken="+filepath.Join(data, "no-such-server"), "--deny", "broken:*")
	if code != exitServerFailed || !strings.Contains(stderr, `the rule "deny broken:*" of --deny names MCP server "broken", which is configured but not running; the rule applies when it runs`) {
		t.Errorf("rule naming a server that is down: exit %d, stderr:\n%s", code, stderr)
	}
	// createTicket is a local tool: AGENT_GUARD_CONFIRM may name it, and
	// then -p has nobody to ask and refuses it.
	_, stderr, code = runBounded(t, t.TempDir(), append(env, guard.EnvConfirm+"=createTicket"), "", "chat", "--model", "offline", "-p", `use createTicket {"subject":"screen","description":"A-1024: the screen is broken"}`)
	if code != exitRefused || !strings.Contains(stderr, "tool createTicket needs confirmation but stdin is not a terminal: refused; take createTicket out of AGENT_GUARD_CONFIRM") {
		t.Errorf("local tool in %s: exit %d, stderr:\n%s", guard.EnvConfirm, code, stderr)
	}
}
