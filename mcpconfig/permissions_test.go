package mcpconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/guard"
)

// TestLoadScopesReadsPermissions: each file's "permissions" are read with
// the file and scope named as their source, lowest precedence first.
func TestLoadScopesReadsPermissions(t *testing.T) {
	proj, getenv := scopeEnv(t)
	user, _ := UserFile(getenv)
	writeTestFile(t, user, `{"mcpServers": {}, "permissions": {"deny": ["files:move_file"], "allow": ["memory:*"]}}`)
	writeTestFile(t, filepath.Join(proj, ProjectFile), `{"permissions": {"ask": ["files:*"], "allow": ["*"]}}`)
	res, err := LoadScopes(ScopesOptions{Dir: proj, Getenv: getenv, SkipBroken: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Permissions) != 2 || res.Permissions[0].Scope != ScopeUser || res.Permissions[1].Scope != ScopeProject {
		t.Fatalf("permissions = %+v, want the user's then the project's", res.Permissions)
	}
	var got []string
	for _, f := range res.Permissions {
		for _, r := range f.Rules {
			got = append(got, r.String()+" @ "+r.Source)
		}
	}
	want := []string{
		"deny files:move_file @ " + user + " (user scope)",
		"allow memory:* @ " + user + " (user scope)",
		"ask files:* @ " + filepath.Join(proj, ProjectFile) + " (project scope)",
		"allow * @ " + filepath.Join(proj, ProjectFile) + " (project scope)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Permissions[0].Rules[0].Permission != guard.Deny {
		t.Errorf("first rule %+v", res.Permissions[0].Rules[0])
	}
}

// TestPermissionsFailClosed: a wrong permissions section is an error
// naming the file and the entry, even where a broken file would be skipped,
// since a skipped rule could be a deny.
func TestPermissionsFailClosed(t *testing.T) {
	cases := map[string]string{
		`{"permissions": ["files:*"]}`:                    `want an object like`,
		`{"permissions": {"alow": ["files:*"]}}`:          `unknown key "alow"; want allow, ask or deny`,
		`{"permissions": {"deny": "files:*"}}`:            `"deny": want a list of strings`,
		`{"permissions": {"deny": ["files:"]}}`:           `deny: permission pattern "files:": the tool is missing`,
		`{"permissions": {"deny": ["a"], "deny": ["b"]}}`: `"deny" is given twice`,
		"{\"permissions\": {\"deny\": [\"files:*\"]},}\n": `invalid JSON`, // broken JSON that holds rules: not skipped
	}
	for content, want := range cases {
		proj, getenv := scopeEnv(t)
		user, _ := UserFile(getenv)
		writeTestFile(t, user, content)
		_, err := LoadScopes(ScopesOptions{Dir: proj, Getenv: getenv, SkipBroken: true})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), user) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", content, err, want)
		}
	}
}

// TestAddAllow: a rule is added to the allow list, created when missing,
// once, keeping the other lists and members; the file then loads with it.
func TestAddAllow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"project": "/p", "permissions": {"deny": ["files:write_file"]}, "mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"shop:createTicket", "shop:createTicket", "memory:read_graph"} {
		if err := f.AddAllow(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.AddAllow("no colon"); err == nil {
		t.Error("a bad pattern was added")
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var got struct {
		Project     string              `json:"project"`
		Permissions map[string][]string `json:"permissions"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Project != "/p" || !slices.Equal(got.Permissions["deny"], []string{"files:write_file"}) ||
		!slices.Equal(got.Permissions["allow"], []string{"shop:createTicket", "memory:read_graph"}) {
		t.Errorf("file now:\n%s", data)
	}
}
