package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func mustParse(t *testing.T, s string) Config {
	t.Helper()
	c, err := Parse(json.RawMessage(s), "test.json")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		`[]`:                 "want an object",
		`{"PreTool": []}`:    `unknown event "PreTool"`,
		`{"PreToolUse": {}}`: "want a list",
		`{"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}`: "neither a name nor a regular expression",
		`{"PreToolUse": [{"matcher": "a"}]}`:                                                 "no hooks",
		`{"PreToolUse": [{"hooks": [{"type": "prompt", "command": "x"}]}]}`:                  `type "prompt" is not supported`,
		`{"PreToolUse": [{"hooks": [{"type": "command", "command": " "}]}]}`:                 "command is empty",
		`{"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}`:  "timeout",
	} {
		_, err := Parse(json.RawMessage(in), "f")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%s) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestMatchers(t *testing.T) {
	c := mustParse(t, `{"PreToolUse": [
		{"matcher": "getOrderStatus", "hooks": [{"type": "command", "command": "a"}]},
		{"matcher": "mcp__shop__.*", "hooks": [{"type": "command", "command": "b"}]},
		{"matcher": "*", "hooks": [{"type": "command", "command": "c"}]},
		{"hooks": [{"type": "command", "command": "d", "timeout": 5}]}]}`)
	ms := c[PreToolUse]
	if len(ms) != 4 || ms[3].Hooks[0].Timeout != 5*time.Second || ms[0].Hooks[0].Timeout != DefaultTimeout {
		t.Fatalf("parsed %+v", ms)
	}
	for _, tc := range []struct {
		m     int
		names []string
		want  bool
	}{
		{0, []string{"getOrderStatus"}, true},
		{0, []string{"getOrderStatusX"}, false}, // a name matches whole
		{1, []string{"track", "mcp__shop__track"}, true},
		{1, []string{"mcp__other__track"}, false},
		{2, []string{"anything"}, true},
		{3, []string{"anything"}, true},
	} {
		if got := ms[tc.m].Matches(tc.names...); got != tc.want {
			t.Errorf("matcher %q on %v = %v", ms[tc.m].Pattern, tc.names, got)
		}
	}
}

func run(t *testing.T, cfg string, in Input, names ...string) Result {
	t.Helper()
	r := NewRunner(mustParse(t, cfg), t.TempDir())
	return r.Run(context.Background(), in, names...)
}

func hookJSON(ev Event, matcher, command string) string {
	c, _ := json.Marshal(command)
	return `{"` + string(ev) + `": [{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": ` + string(c) + `}]}]}`
}

func TestRunInputAndExit2(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "in.json")
	res := run(t, hookJSON(PreToolUse, "getOrderStatus", "cat > "+log+"; echo 'orders are closed' >&2; exit 2"),
		Input{SessionID: "s1", HookEventName: PreToolUse, ToolName: "getOrderStatus", ToolInput: json.RawMessage(`{"orderId":"A-1024"}`)},
		"getOrderStatus")
	if !res.Block || res.Reason != "orders are closed" || res.Ran != 1 {
		t.Fatalf("result %+v", res)
	}
	var got map[string]any
	b, _ := os.ReadFile(log)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("stdin %q: %v", b, err)
	}
	if got["session_id"] != "s1" || got["hook_event_name"] != "PreToolUse" || got["tool_name"] != "getOrderStatus" ||
		got["tool_input"].(map[string]any)["orderId"] != "A-1024" || got["cwd"] == "" {
		t.Errorf("stdin %v", got)
	}
}

func TestRunNoMatchRunsNothing(t *testing.T) {
	res := run(t, hookJSON(PreToolUse, "other", "exit 2"), Input{HookEventName: PreToolUse, ToolName: "x"}, "x")
	if res.Ran != 0 || res.Block {
		t.Errorf("result %+v", res)
	}
}

func TestRunJSONDecisions(t *testing.T) {
	res := run(t, `{"PreToolUse": [{"matcher": "*", "hooks": [
		{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"allow\", \"updatedInput\": {\"orderId\": \"B-1\"}}}'"},
		{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"no\", \"additionalContext\": \"ctx\"}}'"}]}]}`,
		Input{HookEventName: PreToolUse, ToolName: "t"}, "t")
	if res.Permission != "deny" || res.PermissionReason != "no" || string(res.UpdatedInput) != `{"orderId": "B-1"}` || len(res.Context) != 1 {
		t.Errorf("result %+v", res)
	}
	res = run(t, hookJSON(UserPromptSubmit, "", `echo '{"decision": "block", "reason": "no secrets"}'`), Input{HookEventName: UserPromptSubmit, Prompt: "p"})
	if !res.Block || res.Reason != "no secrets" {
		t.Errorf("result %+v", res)
	}
	res = run(t, hookJSON(UserPromptSubmit, "", `echo today is Monday`), Input{HookEventName: UserPromptSubmit, Prompt: "p"})
	if res.Block || len(res.Context) != 1 || res.Context[0] != "today is Monday" {
		t.Errorf("result %+v", res)
	}
}

func TestRunOtherExitIsNotBlocking(t *testing.T) {
	res := run(t, hookJSON(PostToolUse, "", "echo oops >&2; exit 1"), Input{HookEventName: PostToolUse})
	if res.Block || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "exited 1: oops") {
		t.Errorf("result %+v", res)
	}
	res = run(t, hookJSON(PostToolUse, "", "echo '{not json'"), Input{HookEventName: PostToolUse})
	if res.Block || len(res.Errors) != 1 {
		t.Errorf("result %+v", res)
	}
}

// TestRunTimeoutKillsGroup: a hook past its timeout is stopped with the
// child it started, and the others' answers still count.
func TestRunTimeoutKillsGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	cfg := `{"Stop": [{"hooks": [
		{"type": "command", "command": "sleep 30 & echo $! > ` + pidFile + `; wait", "timeout": 0.5},
		{"type": "command", "command": "exit 2"}]}]}`
	start := time.Now()
	res := run(t, cfg, Input{HookEventName: Stop})
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	if !res.Block || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "timed out") {
		t.Errorf("result %+v", res)
	}
	assertGone(t, pidFile)
}

// TestRunReapsBackgroundChild: a child left running by a hook that ended
// is killed with its group.
func TestRunReapsBackgroundChild(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	res := run(t, hookJSON(Stop, "", "sleep 30 >/dev/null 2>&1 & echo $! > "+pidFile), Input{HookEventName: Stop})
	if len(res.Errors) != 0 {
		t.Fatalf("result %+v", res)
	}
	assertGone(t, pidFile)
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		// A killed child stays a zombie until init reaps it; its state
		// says so.
		if st, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat"); strings.Contains(string(st), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d still runs", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunParallelAndCapped(t *testing.T) {
	cfg := `{"PostToolUse": [{"hooks": [
		{"type": "command", "command": "sleep 1"},
		{"type": "command", "command": "sleep 1; head -c 1000000 /dev/zero | tr '\\0' x >&2; exit 1"}]}]}`
	start := time.Now()
	res := run(t, cfg, Input{HookEventName: PostToolUse})
	if d := time.Since(start); d > 1900*time.Millisecond {
		t.Errorf("two 1 s hooks took %v: not run at once", d)
	}
	if len(res.Errors) != 1 || len(res.Errors[0]) > DefaultMaxOutput+200 {
		t.Errorf("errors %d, first %d bytes", len(res.Errors), len(res.Errors[0]))
	}
}
