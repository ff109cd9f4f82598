package mcpconfig

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// scopeEnv is a fresh config directory and project directory.
func scopeEnv(t *testing.T) (proj string, getenv func(string) string) {
	root := t.TempDir()
	proj = filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	xdg := filepath.Join(root, "xdg")
	return proj, func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return ""
	}
}

// TestLoadScopesSkipsBrokenFile: a malformed .mcp.json is left out with a
// warning naming the file, line and column, and the user's servers still
// load; without SkipBroken it stops the load as before.
func TestLoadScopesSkipsBrokenFile(t *testing.T) {
	proj, getenv := scopeEnv(t)
	user, _ := UserFile(getenv)
	writeTestFile(t, user, `{"mcpServers": {"mine": {"command": "srv"}}}`)
	bad := filepath.Join(proj, ProjectFile)
	writeTestFile(t, bad, "{\"mcpServers\": {\n  \"x\": {\"command\": \"a\",}\n}}\n")
	var logs bytes.Buffer
	opts := ScopesOptions{Dir: proj, Getenv: getenv, SkipBroken: true,
		Load: &LoadOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil)), LookupEnv: func(string) (string, bool) { return "", false }}}
	res, err := LoadScopes(opts)
	if err != nil {
		t.Fatalf("LoadScopes: %v", err)
	}
	if len(res.Servers) != 1 || res.Servers[0].Server.Name != "mine" {
		t.Errorf("servers = %+v, want the user's one", res.Servers)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].File != bad {
		t.Fatalf("Skipped = %v", res.Skipped)
	}
	want := bad + ": invalid JSON at line 2, column 25"
	if !strings.HasPrefix(res.Skipped[0].Error(), want) {
		t.Errorf("skipped: %v\nwant a message starting %q", res.Skipped[0], want)
	}
	if !strings.Contains(logs.String(), "does not load and is skipped") || !strings.Contains(logs.String(), "line 2, column 25") {
		t.Errorf("log:\n%s", logs.String())
	}
	opts.SkipBroken = false
	if _, err := LoadScopes(opts); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("strict: %v", err)
	}
	// A file the user named is an error either way.
	opts.SkipBroken, opts.ConfigFile = true, bad
	if _, err := LoadScopes(opts); err == nil {
		t.Error("a broken --config file was skipped")
	}
}

// TestLoadScopesLocalPrecedence: local over project over user.
func TestLoadScopesLocalPrecedence(t *testing.T) {
	proj, getenv := scopeEnv(t)
	for scope, cmd := range map[Scope]string{ScopeUser: "u", ScopeProject: "p", ScopeLocal: "l"} {
		p, err := ScopeFilePath(scope, proj, getenv)
		if err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, p, `{"mcpServers": {"both": {"command": "`+cmd+`"}, "only-`+cmd+`": {"command": "`+cmd+`"}}}`)
	}
	res, err := LoadScopes(ScopesOptions{Dir: proj, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Servers {
		got[s.Server.Name] = string(s.Scope) + ":" + s.Server.Command
	}
	want := map[string]string{"both": "local:l", "only-u": "user:u", "only-p": "project:p", "only-l": "local:l"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(res.Shadowed) != 2 {
		t.Errorf("shadowed = %d, want 2", len(res.Shadowed))
	}
}

// TestLocalFileKeyedByProject: two projects get two files, one project the
// same file however its path is written; the files live in the user's
// config directory.
func TestLocalFileKeyedByProject(t *testing.T) {
	proj, getenv := scopeEnv(t)
	other := filepath.Join(filepath.Dir(proj), "other")
	a, _ := LocalFile(proj, getenv)
	b, _ := LocalFile(proj+"/sub/..", getenv)
	c, _ := LocalFile(other, getenv)
	if a != b || a == c {
		t.Errorf("LocalFile: %s, %s, %s", a, b, c)
	}
	if !strings.HasPrefix(a, filepath.Join(getenv("XDG_CONFIG_HOME"), "agentapp", "projects", "proj-")) {
		t.Errorf("LocalFile = %s", a)
	}
}

func TestNearest(t *testing.T) {
	for in, want := range map[string]string{
		"comand": "command", "Command": "command", "ars": "args", "agrs": "args", "urll": "url",
		"enviroment": "", "x-note": "", "headrs": "headers",
	} {
		if got := Nearest(in, knownFields); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnknownFieldDidYouMean: a misspelt field is named with its likely
// meaning, in the warning and in the error of the field it leaves missing.
func TestUnknownFieldDidYouMean(t *testing.T) {
	var logs bytes.Buffer
	_, err := parseConfig("f.json", []byte(`{"mcpServers": {"s": {"comand": "srv"}}}`), &LoadOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err == nil || !strings.Contains(err.Error(), `(the entry has "comand": did you mean "command"?)`) {
		t.Errorf("error: %v", err)
	}
	if !strings.Contains(logs.String(), `did you mean \"command\"?`) || !strings.Contains(logs.String(), "file=f.json") {
		t.Errorf("log:\n%s", logs.String())
	}
}

func TestResetProject(t *testing.T) {
	a, err := OpenApprovals(filepath.Join(t.TempDir(), "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	a.Approve("/p", "x", []byte(`{}`))
	a.Decline("/p", "y", []byte(`{}`))
	a.Approve("/q", "x", []byte(`{}`))
	if n := a.ResetProject("/p"); n != 2 {
		t.Errorf("ResetProject = %d, want 2", n)
	}
	if a.Approved("/p", "x", []byte(`{}`)) || a.Declined("/p", "y", []byte(`{}`)) || !a.Approved("/q", "x", []byte(`{}`)) {
		t.Error("ResetProject forgot the wrong choices")
	}
}
