package main

import (
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/oauthtest"
	"github.com/agentapp/agentapp/mcpclient/oauth"
)

// browserScripts writes two $BROWSER commands: one that approves the
// login (it fetches the URL and follows the redirects, as far as the
// loopback callback), and one that only records that it was run.
func browserScripts(t *testing.T) (approve, forbidden, marker string) {
	t.Helper()
	dir := t.TempDir()
	approve = filepath.Join(dir, "approve.sh")
	forbidden = filepath.Join(dir, "forbidden.sh")
	marker = filepath.Join(dir, "opened")
	if err := os.WriteFile(approve, []byte("#!/bin/sh\nexec curl -sS -L --max-time 20 -o /dev/null \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(forbidden, []byte("#!/bin/sh\necho \"$1\" > "+marker+"\nexit 1\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return approve, forbidden, marker
}

func noTokens(t *testing.T, srv *oauthtest.Server, where, text string) {
	t.Helper()
	for _, tok := range srv.Issued() {
		if strings.Contains(text, tok) {
			t.Errorf("token %s appears in %s:\n%s", tok, where, text)
		}
	}
}

// TestMCPLoginLogoutCLI: `mcp login URL` runs the browser step through
// $BROWSER and stores the login 0600; a later `mcp call` refreshes the
// expired token without a browser; `mcp logout` deletes the file. The same
// holds with --transport sse for a server of the legacy SSE transport.
func TestMCPLoginLogoutCLI(t *testing.T) {
	for _, sse := range []bool{false, true} {
		name := map[bool]string{false: "streamable", true: "sse"}[sse]
		t.Run(name, func(t *testing.T) { testMCPLoginLogoutCLI(t, sse) })
	}
}

func testMCPLoginLogoutCLI(t *testing.T, sse bool) {
	srv := oauthtest.New(t, oauthtest.Options{ExpiresIn: 1, SSE: sse})
	approve, forbidden, marker := browserScripts(t)
	data := t.TempDir()
	file := oauth.NewTokenStore(data).Path(srv.URL)

	t.Setenv("BROWSER", approve)
	login := []string{"mcp", "login", srv.URL, "--data-dir", data}
	if sse {
		login = append(login, "--transport", "sse")
	}
	out, stderr, code := runChatCLI(t, "", login...)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "open this URL in your browser") || !strings.Contains(stderr, "agentapp: logged in to MCP server "+srv.URL+"; the login is stored in "+file) {
		t.Errorf("login stderr:\n%s", stderr)
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v", err, fi.Mode())
	}
	all := out + stderr

	t.Setenv("BROWSER", forbidden)
	call := []string{"mcp", "call", "whoami", "{}", "--server", srv.URL, "--data-dir", data}
	if sse {
		call = append(call, "--transport", "sse")
	}
	out, stderr, code = runChatCLI(t, "", call...)
	if code != 0 || !strings.Contains(out, `"output": "logged in"`) {
		t.Fatalf("call with the stored login: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the call opened a browser although a refreshable login was stored")
	}
	if srv.Refreshes() == 0 || srv.Logins() != 1 {
		t.Errorf("%d refreshes, %d logins; want a silent refresh", srv.Refreshes(), srv.Logins())
	}
	if sse && srv.Requests(http.MethodGet) != 2 {
		t.Errorf("%d event streams reached the server with a token; want one per command", srv.Requests(http.MethodGet))
	}
	all += out + stderr

	out, stderr, code = runChatCLI(t, "", "mcp", "logout", srv.URL, "--data-dir", data)
	if code != 0 || !strings.Contains(stderr, "logged out of MCP server "+srv.URL) {
		t.Fatalf("logout: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the token file survived logout: %v", err)
	}
	all += out + stderr
	noTokens(t, srv, "the CLI's output", all)
}

// TestChatOAuth: the chat never opens a browser; without a login it says
// which command logs in; with a stored login it starts, and no token
// reaches its output, trace or audit log (or any file of the data
// directory but the login's own).
func TestChatOAuth(t *testing.T) {
	chatEnv(t)
	srv := oauthtest.New(t, oauthtest.Options{})
	approve, forbidden, marker := browserScripts(t)
	data := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"desk":{"url":"`+srv.URL+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Setenv("BROWSER", forbidden)
	// The chat answers without the server (exit 3: a configured server
	// did not connect) and says which command logs in.
	out, stderr, code := runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "--config", cfg, "-p", "where is order A-1024?")
	if code != 3 || !strings.Contains(out, "A-1024") || !strings.Contains(stderr, "MCP server desk needs a login (agentapp mcp login desk --config "+cfg+")") {
		t.Errorf("chat without a login: exit %d\n%s\n%s", code, out, stderr)
	}
	// The REPL starts, and /mcp shows the state with the command.
	out, stderr, code = runChatCLI(t, "/mcp\n", "chat", "--data-dir", data, "--model", "offline", "--config", cfg)
	if code != 0 || !strings.Contains(out, "needs login: agentapp mcp login desk --config "+cfg) {
		t.Errorf("/mcp of a chat without a login: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the chat opened a browser")
	}

	t.Setenv("BROWSER", approve)
	if _, stderr, code := runChatCLI(t, "", "mcp", "login", "desk", "--config", cfg, "--data-dir", data); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, stderr)
	}
	t.Setenv("BROWSER", forbidden)
	out, stderr, code = runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "--config", cfg, "--trace", "-p", "where is order A-1024?")
	if code != 0 {
		t.Fatalf("chat with a stored login: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the chat opened a browser")
	}
	noTokens(t, srv, "the chat's output and trace", out+stderr)
	err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) == "oauth" {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil {
			noTokens(t, srv, p, string(b))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMCPOAuthFlags: --oauth-client-id is used instead of registering a
// client, --oauth-scope replaces the server's scopes, and --transport sse
// speaks the legacy transport (which this server does not).
func TestMCPOAuthFlags(t *testing.T) {
	srv := oauthtest.New(t, oauthtest.Options{ChallengeScope: "server:scope"})
	approve, _, _ := browserScripts(t)
	t.Setenv("BROWSER", approve)
	out, stderr, code := runChatCLI(t, "", "mcp", "call", "whoami", "{}", "--server", srv.URL, "--data-dir", t.TempDir(),
		"--oauth-client-id", "my-client", "--oauth-client-secret", "my-secret", "--oauth-scope", "a b", "--oauth-scope", "c")
	if code != 0 || !strings.Contains(out, `"output": "logged in"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	q := srv.LastAuthorize()
	scopes := strings.Fields(q.Get("scope"))
	slices.Sort(scopes) // the SDK does not keep the order
	if q.Get("client_id") != "my-client" || strings.Join(scopes, " ") != "a b c" || srv.Registrations() != 0 {
		t.Errorf("authorize query %v, %d registrations", q, srv.Registrations())
	}
	if strings.Contains(stderr, "my-secret") {
		t.Errorf("the client secret was printed:\n%s", stderr)
	}

	_, stderr, code = runChatCLI(t, "", "mcp", "tools", "--server", srv.URL, "--data-dir", t.TempDir(), "--transport", "sse", "--connect-timeout", "5s")
	if code != 3 || !strings.Contains(stderr, "legacy SSE transport") {
		t.Errorf("--transport sse: exit %d\n%s", code, stderr)
	}
	_, stderr, code = runChatCLI(t, "", "mcp", "tools", "--data-dir", t.TempDir(), "--oauth-client-id", "x", "--", "true")
	if code != 2 || !strings.Contains(stderr, "apply to HTTP servers only") {
		t.Errorf("oauth flag on stdio: exit %d\n%s", code, stderr)
	}
}
