package mcpconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFileEditKeepsTheRest: adding and removing servers keeps the other
// top-level keys, the other servers and their unknown fields, in order;
// the file is written 0600 through a rename, in a 0700 directory.
func TestFileEditKeepsTheRest(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := filepath.Join(dir, "mcp.json")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	orig := `{"globalShortcut": "Ctrl+Space", "mcpServers": {
	  "files": {"command": "npx", "args": ["-y", "fs", "/tmp"], "x-other-client": {"keep": true}},
	  "old": {"command": "old-server"}
	}, "theme": "dark"}`
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Set("remote", Entry{Transport: "http", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}.JSON())
	if !f.Remove("old") || f.Remove("nosuch") {
		t.Fatal("Remove reported wrongly")
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{`"globalShortcut": "Ctrl+Space"`, `"theme": "dark"`, `"x-other-client": {`, `"keep": true`, `"url": "https://example.com/mcp"`, `"Authorization": "Bearer ${TOKEN}"`} {
		if !strings.Contains(s, want) {
			t.Errorf("file lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "old-server") {
		t.Errorf("removed server still there:\n%s", s)
	}
	if strings.Index(s, "globalShortcut") > strings.Index(s, "mcpServers") || strings.Index(s, "mcpServers") > strings.Index(s, "theme") ||
		strings.Index(s, `"files"`) > strings.Index(s, `"remote"`) {
		t.Errorf("order not kept:\n%s", s)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	servers, err := Load(path, &LoadOptions{LookupEnv: func(string) (string, bool) { return "t", true }})
	if err != nil || len(servers) != 2 || servers[1].Name != "remote" || servers[1].Headers["Authorization"] != "Bearer t" {
		t.Errorf("reloaded: %v %+v", err, servers)
	}

	// A new file in a new directory: 0700 directory, 0600 file.
	fresh := filepath.Join(t.TempDir(), "a", "b", "mcp.json")
	f, err = OpenFile(fresh)
	if err != nil || f.Exists() {
		t.Fatalf("OpenFile of a missing file: %v, exists %v", err, f.Exists())
	}
	f.Set("mem", Entry{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-memory"}, Env: map[string]string{"A": "1"}}.JSON())
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(filepath.Dir(fresh)); info.Mode().Perm() != 0o700 {
		t.Errorf("new directory mode %v, want 0700", info.Mode().Perm())
	}
	var got map[string]map[string]json.RawMessage
	data, _ = os.ReadFile(fresh)
	if err := json.Unmarshal(data, &got); err != nil || string(got["mcpServers"]["mem"]) == "" {
		t.Errorf("new file: %v\n%s", err, data)
	}
}

// TestOpenFileRefusesBrokenFiles: a file that cannot be edited without
// losing something is refused with the file's name.
func TestOpenFileRefusesBrokenFiles(t *testing.T) {
	for content, want := range map[string]string{
		`{"mcpServers": {`:   "fix it by hand",
		`[1]`:                "want a JSON object",
		`{"mcpServers": []}`: "want an object mapping",
		`{"mcpServers": {"a": {}, "a": {"x": true}}}`: "defined twice",
	} {
		path := filepath.Join(t.TempDir(), "mcp.json")
		os.WriteFile(path, []byte(content), 0o600)
		_, err := OpenFile(path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err %v, want %q", content, err, want)
		}
	}
}

func TestCheckEntry(t *testing.T) {
	for entry, want := range map[string]string{
		`{"command": "x", "args": ["${UNSET_VAR}"]}`: "",
		`{"url": "https://e.com/mcp"}`:               "",
		`{"command": "x", "url": "https://e.com"}`:   "not both",
		`{"args": "no"}`:                             "want a list of strings",
		`{`:                                          "not valid JSON",
	} {
		err := CheckEntry("s", json.RawMessage(entry))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: err %v, want %q", entry, err, want)
		}
	}
	if err := CheckEntry("s", json.RawMessage(`{"args": "no"}`)); err == nil || !strings.HasPrefix(err.Error(), `server "s": field "args": `) {
		t.Errorf("error does not start at the server: %v", err)
	}
	if err := CheckEntry("bad name", json.RawMessage(`{"command":"x"}`)); err == nil {
		t.Error("a name with a space was accepted")
	}
}

// TestLoadScopes: user, project and file servers resolve by precedence
// (file over project over user), the shadowed ones are kept for listing,
// disabled entries are returned as such.
func TestLoadScopes(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	write := func(path, content string) {
		os.MkdirAll(filepath.Dir(path), 0o700)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".config", "agentapp", "mcp.json"), `{"mcpServers": {"a": {"command": "user-a"}, "u": {"command": "user-u"}}}`)
	write(filepath.Join(proj, ".mcp.json"), `{"mcpServers": {"a": {"command": "project-a"}, "p": {"command": "project-p"}, "off": {"command": "x", "disabled": true}}}`)
	write(filepath.Join(proj, "agentapp.json"), `{"mcpServers": {"p": {"command": "file-p"}}}`)
	env := map[string]string{"HOME": home}
	res, err := LoadScopes(ScopesOptions{Dir: proj, DefaultFile: "agentapp.json", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range res.Servers {
		got[s.Server.Name] = string(s.Scope) + ":" + s.Server.Command
		if s.Disabled {
			got[s.Server.Name] = string(s.Scope) + ":disabled"
		}
	}
	want := map[string]string{"a": "project:project-a", "u": "user:user-u", "p": "file:file-p", "off": "project:disabled"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q (all %v)", k, got[k], v, got)
		}
	}
	if len(res.Shadowed) != 2 {
		t.Errorf("shadowed = %+v, want user's a and project's p", res.Shadowed)
	}
	// XDG_CONFIG_HOME wins over HOME when absolute.
	env["XDG_CONFIG_HOME"] = filepath.Join(home, "xdg")
	if p, _ := UserFile(func(k string) string { return env[k] }); p != filepath.Join(home, "xdg", "agentapp", "mcp.json") {
		t.Errorf("UserFile = %s", p)
	}
	env["XDG_CONFIG_HOME"] = "relative"
	if p, _ := UserFile(func(k string) string { return env[k] }); p != filepath.Join(home, ".config", "agentapp", "mcp.json") {
		t.Errorf("UserFile with a relative XDG_CONFIG_HOME = %s", p)
	}
}

// TestApprovals: an approval is per project and per entry: a changed entry
// is not approved any more.
func TestApprovals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.json")
	a, err := OpenApprovals(path)
	if err != nil {
		t.Fatal(err)
	}
	e := json.RawMessage(`{"command": "x"}`)
	a.Approve("/p", "s", e)
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := OpenApprovals(path)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Approved("/p", "s", json.RawMessage(`{"command":"x"}`)) {
		t.Error("the same entry (other spacing) is not approved")
	}
	if b.Approved("/p", "s", json.RawMessage(`{"command":"y"}`)) || b.Approved("/q", "s", e) {
		t.Error("a changed entry or another project counts as approved")
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode().Perm())
	}
}

// TestApprovalsRemembersADecline: a "no" is kept across opens, for the
// same entry only; approving replaces it, and Revoke forgets both.
func TestApprovalsRemembersADecline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "approvals.json")
	a, err := OpenApprovals(path)
	if err != nil {
		t.Fatal(err)
	}
	e := json.RawMessage(`{"command": "x"}`)
	a.Decline("/p", "s", e)
	if err := a.Save(); err != nil {
		t.Fatal(err)
	}
	b, err := OpenApprovals(path)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Declined("/p", "s", e) || b.Approved("/p", "s", e) {
		t.Error("the decline was not kept, or counts as an approval")
	}
	if b.Declined("/p", "s", json.RawMessage(`{"command":"y"}`)) {
		t.Error("a changed entry counts as declined: it must be asked about again")
	}
	b.Approve("/p", "s", e)
	if b.Declined("/p", "s", e) || !b.Approved("/p", "s", e) {
		t.Error("approving did not replace the decline")
	}
	b.Decline("/p", "s", e)
	if b.Approved("/p", "s", e) {
		t.Error("declining did not replace the approval")
	}
	if !b.Revoke("/p", "s") || b.Declined("/p", "s", e) {
		t.Error("Revoke did not forget the decline")
	}
}
