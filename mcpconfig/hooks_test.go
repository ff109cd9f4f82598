package mcpconfig

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/hooks"
)

// TestLoadScopesReadsHooks: each file's "hooks" are read with the file and
// scope as their source, lowest precedence first, the entry kept for the
// approval of a project's.
func TestLoadScopesReadsHooks(t *testing.T) {
	proj, getenv := scopeEnv(t)
	user, _ := UserFile(getenv)
	writeTestFile(t, user, `{"hooks": {"PreToolUse": [{"matcher": "getOrderStatus", "hooks": [{"type": "command", "command": "./log.sh"}]}]}}`)
	writeTestFile(t, filepath.Join(proj, ProjectFile), `{"mcpServers": {}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "exit 0", "timeout": 3}]}]}}`)
	res, err := LoadScopes(ScopesOptions{Dir: proj, Getenv: getenv, SkipBroken: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hooks) != 2 || res.Hooks[0].Scope != ScopeUser || res.Hooks[1].Scope != ScopeProject {
		t.Fatalf("hooks = %+v, want the user's then the project's", res.Hooks)
	}
	pre := res.Hooks[0].Hooks[hooks.PreToolUse]
	if len(pre) != 1 || pre[0].Pattern != "getOrderStatus" || pre[0].Hooks[0].Source != user+" (user scope)" {
		t.Errorf("user hooks %+v", pre)
	}
	if !strings.Contains(string(res.Hooks[1].Entry), `"Stop"`) {
		t.Errorf("project entry %s", res.Hooks[1].Entry)
	}
}

// TestHooksFailClosed: a wrong hooks object is an error naming the file,
// even where a broken file would be skipped.
func TestHooksFailClosed(t *testing.T) {
	for content, want := range map[string]string{
		`{"hooks": {"BeforeTool": []}}`: `unknown event "BeforeTool"`,
		`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}}`: "regular expression",
		"{\"hooks\": {}},\n": "invalid JSON",
	} {
		proj, getenv := scopeEnv(t)
		user, _ := UserFile(getenv)
		writeTestFile(t, user, content)
		_, err := LoadScopes(ScopesOptions{Dir: proj, Getenv: getenv, SkipBroken: true})
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), user) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", content, err, want)
		}
	}
}
