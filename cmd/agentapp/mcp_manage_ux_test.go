package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// failingScript writes a stdio "server" that prints a start line and a
// FATAL line on stderr and exits 1, as a server missing a setting does.
func failingScript(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "db-server.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\necho 'starting db-server 1.2' >&2\necho 'FATAL: DATABASE_URL is not set' >&2\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

func contains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// TestMCPListShowsWhyAServerFailed: list and get show the server's own
// words for the failure, list exits 3, and --json carries the same.
func TestMCPListShowsWhyAServerFailed(t *testing.T) {
	e := newManageEnv(t)
	script := failingScript(t)
	e.mustRun("mcp", "add", "db", "--", script)
	out, errOut, code := e.run("", "mcp", "list")
	if code != mcpExitConnection {
		t.Errorf("list: exit %d, want %d", code, mcpExitConnection)
	}
	contains(t, "list", out, "db (local): "+script+" — ✗ failed: connecting to MCP server db", "\n      its stderr says: FATAL: DATABASE_URL is not set\n")
	contains(t, "list stderr", errOut, "agentapp: 1 of 1 MCP server failed (did not connect, or the entry is invalid): db")
	out, _, code = e.run("", "mcp", "get", "db")
	if code != mcpExitConnection {
		t.Errorf("get: exit %d", code)
	}
	contains(t, "get", out, "its stderr says: FATAL: DATABASE_URL is not set", "last lines on its stderr:", "starting db-server 1.2")
	out, _, _ = e.run("", "mcp", "list", "--json")
	var doc struct {
		Servers []serverView `json:"servers"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].Status != "failed" || len(doc.Servers[0].StderrErrors) != 1 || doc.Servers[0].StderrErrors[0] != "FATAL: DATABASE_URL is not set" {
		t.Errorf("list --json: %+v", doc.Servers)
	}
	// mcp tools -- CMD shows it too.
	_, errOut, code = e.run("", "mcp", "tools", "--", script)
	if code != mcpExitConnection {
		t.Errorf("tools: exit %d", code)
	}
	contains(t, "tools stderr", errOut, "\nits stderr says: FATAL: DATABASE_URL is not set\n")
}

// TestBrokenConfigFileIsSkipped: a malformed .mcp.json is named with its
// line and column and left out; list, get and the chat go on with the
// other files, and --strict-mcp refuses.
func TestBrokenConfigFileIsSkipped(t *testing.T) {
	e := newManageEnv(t)
	e.mustRun("mcp", "add", "--scope", "user", "mine", "--", mcpTestServerBin(t), "-mode", "normal")
	bad := filepath.Join(e.proj, ".mcp.json")
	if err := os.WriteFile(bad, []byte("{\"mcpServers\": {\n  \"x\": {\"command\": \"a\",}\n}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	where := bad + ": invalid JSON at line 2, column 25"
	out, errOut, code := e.run("", "mcp", "list")
	if code != 0 {
		t.Errorf("list: exit %d\n%s", code, errOut)
	}
	contains(t, "list", out, "mine (user):", "— ✓ connected", "project: "+bad+" (skipped, it does not load: invalid JSON at line 2, column 25")
	contains(t, "list stderr", errOut, "does not load and is skipped", where)
	out, errOut, code = e.run("", "chat", "--model", "offline", "-p", "hi")
	if code != 0 || out == "" {
		t.Errorf("chat: exit %d, stdout %q\n%s", code, out, errOut)
	}
	contains(t, "chat stderr", errOut, where)
	_, errOut, code = e.run("", "chat", "--model", "offline", "--strict-mcp", "-p", "hi")
	if code == 0 || !strings.Contains(errOut, where) {
		t.Errorf("--strict-mcp: exit %d\n%s", code, errOut)
	}
	// A misspelt field: did you mean.
	if err := os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"comand": "a"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ = e.run("", "mcp", "list")
	contains(t, "list (misspelt field)", out+errOut, `ignoring unknown field "comand" of server "x"; did you mean "command"?`, `(the entry has "comand": did you mean "command"?)`)
}

// TestMCPAddLikeClaude: local is the default scope and wins over project
// and user; a URL is an HTTP server; a secret for the shared file gets a
// warning; get masks it; --help lists only add's flags; approvals can be
// revoked and reset.
func TestMCPAddLikeClaude(t *testing.T) {
	e := newManageEnv(t)
	ts := mcpTestServerBin(t)
	out := e.mustRun("mcp", "add", "tester", "--", ts, "-mode", "normal")
	contains(t, "add", out, "Added MCP server tester to "+filepath.Join(e.xdg, "agentapp", "projects")+"/proj-", "(local scope)")
	if _, err := os.Stat(filepath.Join(e.proj, ".mcp.json")); err == nil {
		t.Error("a local server was written to the project's .mcp.json")
	}
	// Another project does not see it.
	other := filepath.Join(filepath.Dir(e.proj), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := e.command("mcp", "list")
	cmd.Dir = other
	if b, _ := cmd.Output(); !strings.Contains(string(b), "No MCP servers are configured") {
		t.Errorf("list in another project:\n%s", b)
	}
	// local wins over user of the same name.
	e.mustRun("mcp", "add", "--scope", "user", "tester", "--", "/nonexistent/srv")
	out = e.mustRun("mcp", "list")
	contains(t, "list", out, "tester (local): "+ts+" -mode normal — ✓ connected", "tester (user, ")

	out, errOut, code := e.run("", "mcp", "add", "--scope", "project", "crm", "https://crm.example.com/mcp", "-H", "Authorization: Bearer sk-live1234567890", "-H", "X-Trace: on")
	if code != 0 {
		t.Fatalf("add URL: exit %d\n%s", code, errOut)
	}
	contains(t, "add URL stderr", errOut,
		"agentapp: https://crm.example.com/mcp is a URL: adding it as a streamable HTTP server (--transport http",
		"agentapp: warning: "+filepath.Join(e.proj, ".mcp.json")+" is shared with everyone who works on the project, and -H Authorization puts a secret in it; write -H 'Authorization: Bearer ${AUTHORIZATION}' instead")
	if strings.Contains(errOut, "X-Trace") {
		t.Errorf("a plain header was called a secret:\n%s", errOut)
	}
	data, _ := os.ReadFile(filepath.Join(e.proj, ".mcp.json"))
	contains(t, ".mcp.json", string(data), `"url": "https://crm.example.com/mcp"`, `"type": "http"`)
	if strings.Contains(string(data), `"command"`) {
		t.Errorf("the URL was saved as a command:\n%s", data)
	}
	_, errOut, _ = e.run("", "mcp", "add", "--scope", "project", "-e", "API_KEY=${API_KEY}", "ok", "--", "srv")
	if strings.Contains(errOut, "warning") {
		t.Errorf("a ${VAR} value was called a secret:\n%s", errOut)
	}
	if _, errOut, code := e.run("", "mcp", "add", "--transport", "stdio", "bad", "--", "https://x.example/mcp"); code != mcpExitUsage || !strings.Contains(errOut, "is a URL, not a command") {
		t.Errorf("a URL as a command: exit %d\n%s", code, errOut)
	}
	out, _, _ = e.run("", "mcp", "get", "crm")
	contains(t, "get", out, `"Authorization": "Bearer ****"`, `"X-Trace": "on"`)
	if strings.Contains(out, "sk-live") {
		t.Errorf("get shows the secret:\n%s", out)
	}
	out, _, _ = e.run("", "mcp", "get", "--json", "crm")
	if strings.Contains(out, "sk-live") || !strings.Contains(out, `"status": "not-approved"`) {
		t.Errorf("get --json:\n%s", out)
	}

	// --help lists only what applies to add; a client flag is refused.
	help := e.mustRun("mcp", "add", "--help")
	contains(t, "add --help", help, "--scope", "--env", "--transport", "-H, --header")
	for _, no := range []string{"--server", "--token", "--timeout", "--sampling", "--elicit", "--root", "--verbose", "--database", "--data-dir"} {
		if regexp.MustCompile(`(?m)^\s+(-\w, )?` + no + `\b`).MatchString(help) {
			t.Errorf("add --help lists %s:\n%s", no, help)
		}
	}
	if help := e.mustRun("mcp", "approve", "--help"); !strings.Contains(help, "--data-dir") {
		t.Errorf("approve --help does not list --data-dir, where approvals are kept:\n%s", help)
	}
	if _, errOut, code := e.run("", "mcp", "add", "--token", "x", "n", "--", "srv"); code != mcpExitUsage || !strings.Contains(errOut, "--token does not apply to add") {
		t.Errorf("add --token: exit %d\n%s", code, errOut)
	}

	// Approve, revoke one, reset all.
	e.mustRun("mcp", "remove", "ok")
	e.mustRun("mcp", "add", "--scope", "project", "ok", "--", "/nonexistent/srv")
	e.mustRun("mcp", "approve", "crm", "ok")
	out = e.mustRun("mcp", "approve", "--revoke", "crm")
	contains(t, "revoke", out, "Forgot your choice about crm")
	out, _, _ = e.run("", "mcp", "list")
	contains(t, "list after revoke", out, "crm (project): https://crm.example.com/mcp (HTTP) — not approved yet", "ok (project): /nonexistent/srv — ✗ failed")
	out = e.mustRun("mcp", "reset-project-choices")
	contains(t, "reset", out, "Forgot 1 choice about the servers of "+filepath.Join(e.proj, ".mcp.json"))
	out, _, _ = e.run("", "mcp", "list")
	contains(t, "list after reset", out, "ok (project): /nonexistent/srv — not approved yet")
}

// TestMCPAddFromClaudeDesktop imports from Claude Desktop's file in its
// Linux place, all or the named servers, skipping names already there.
func TestMCPAddFromClaudeDesktop(t *testing.T) {
	e := newManageEnv(t)
	desk := filepath.Join(e.xdg, "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(desk), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(desk, []byte(`{"globalShortcut": "x", "mcpServers": {"memory": {"command": "/nonexistent/npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}, "files": {"command": "/nonexistent/npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := e.mustRun("mcp", "add-from-claude-desktop", "memory")
	contains(t, "import one", out, "Imported memory from "+desk)
	out = e.mustRun("mcp", "add-from-claude-desktop")
	contains(t, "import all", out, "Imported files from "+desk, "Skipped memory:")
	out, _, _ = e.run("", "mcp", "get", "files")
	contains(t, "get", out, "scope:  local", "@modelcontextprotocol/server-filesystem")
	if _, errOut, code := e.run("", "mcp", "add-from-claude-desktop", "nope"); code != 1 || !strings.Contains(errOut, `has no server named "nope" (it has: memory, files)`) {
		t.Errorf("unknown name: exit %d\n%s", code, errOut)
	}
}

func TestClaudeDesktopConfigPaths(t *testing.T) {
	env := map[string]string{"HOME": "/home/u", "APPDATA": `C:\Users\u\AppData\Roaming`}
	getenv := func(k string) string { return env[k] }
	for goos, want := range map[string]string{
		"darwin":  "/home/u/Library/Application Support/Claude/claude_desktop_config.json",
		"linux":   "/home/u/.config/Claude/claude_desktop_config.json",
		"windows": filepath.Join(`C:\Users\u\AppData\Roaming`, "Claude", "claude_desktop_config.json"),
	} {
		if got, err := claudeDesktopConfig(goos, getenv); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", goos, got, err, want)
		}
	}
}

func TestMaskEntry(t *testing.T) {
	got := string(maskEntry(json.RawMessage(`{"command":"srv","args":["--api-key","abc123xyz","--token=t0k3nvalue","--port","8080"],"env":{"GITHUB_TOKEN":"ghp_abcdefghijkl","HOME_DIR":"/srv","PASS":"${PASS}"},"url":"https://u:pw@h/x?key=1&api_key=zzz"}`)))
	for _, w := range []string{`"--api-key","****"`, `"--token=****"`, `"8080"`, `"GITHUB_TOKEN":"****"`, `"HOME_DIR":"/srv"`, `"PASS":"${PASS}"`, `u:****@h`, `api_key=****`} {
		if !strings.Contains(got, w) {
			t.Errorf("masked entry lacks %s: %s", w, got)
		}
	}
	for _, no := range []string{"abc123xyz", "t0k3nvalue", "ghp_", "zzz", ":pw@"} {
		if strings.Contains(got, no) {
			t.Errorf("masked entry shows %s: %s", no, got)
		}
	}
}

// TestURLPasswordsAreSecrets: a password in a URL is a secret whatever
// the variable or argument holding it is called: masked (only the
// password) in what `mcp get` shows, warned about when it goes into a
// shared file.
func TestURLPasswordsAreSecrets(t *testing.T) {
	got := string(maskEntry(json.RawMessage(`{"command":"srv","args":["postgres://app:hunter2@db/app","--dsn","mysql://u:pw2@h/x","plain://h/x"],"env":{"DATABASE_URL":"postgres://app:hunter3@db/app","REF":"postgres://app:${PW}@db/app"}}`)))
	for _, w := range []string{`postgres://app:****@db/app`, `mysql://u:****@h/x`, `plain://h/x`, `"DATABASE_URL":"postgres://app:****@db/app"`, `postgres://app:${PW}@db/app`} {
		if !strings.Contains(got, w) {
			t.Errorf("masked entry lacks %s: %s", w, got)
		}
	}
	for _, no := range []string{"hunter2", "hunter3", "pw2"} {
		if strings.Contains(got, no) {
			t.Errorf("masked entry shows %s: %s", no, got)
		}
	}
	if m := maskArgs("srv --db postgres://a:s3cret@h/d"); strings.Contains(m, "s3cret") {
		t.Errorf("maskArgs: %s", m)
	}

	var w strings.Builder
	warnSharedSecrets(&w, ".mcp.json", json.RawMessage(`{"command":"srv","args":["postgres://app:hunter2@db/app"],"env":{"DSN":"postgres://app:hunter3@db/app","OK":"postgres://app:${PW}@db/app"},"url":"https://user:s3cret@h/mcp"}`))
	out := w.String()
	contains(t, "warnings", out, "-e DSN puts a secret in it", "the argument postgres://app:****@db/app holds a password", "postgres://app:${PASSWORD}@db/app", "the URL https://user:****@h/mcp holds a password")
	for _, no := range []string{"hunter2", "hunter3", "s3cret", "OK"} {
		if strings.Contains(out, no) {
			t.Errorf("the warnings show or flag %s:\n%s", no, out)
		}
	}
}
