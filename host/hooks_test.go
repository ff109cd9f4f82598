package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// hookHost opens a host through Open over a config file holding hooksJSON
// (and projectJSON as the project's .mcp.json when set), with a server
// "shop" whose getOrderStatus counts its calls.
func hookHost(t *testing.T, m model.Model, hooksJSON, projectJSON string, rules []guard.Rule, approve func(mcpconfig.ScopedHooks) bool) (*Host, string, *atomic.Int32) {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agentapp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}, "hooks": `+hooksJSON+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if projectJSON != "" {
		if err := os.WriteFile(filepath.Join(dir, mcpconfig.ProjectFile), []byte(projectJSON), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	srv := &liveServer{name: "shop"}
	srv.tools = []*agent.Tool{{Name: "getOrderStatus", Origin: "shop", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(_ context.Context, args json.RawMessage) (any, error) {
			calls.Add(1)
			return `{"orderId":"A-1024","status":"shipped","args":` + string(args) + `}`, nil
		}}}
	if rules == nil {
		all, _ := guard.ParsePattern("*")
		rules = []guard.Rule{{Pattern: all, Permission: guard.Allow, Source: "the test"}}
	}
	h, err := Open(context.Background(), &Options{Model: m, Dir: dir, ConfigFile: cfg, Store: openTestStore(t), KeepStore: true,
		Servers: []Server{srv}, Guards: &guard.Config{Permissions: guard.Permissions{Rules: rules}}, ApproveHooks: approve})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, dir, &calls
}

func hooksOf(ev, matcher, command string) string {
	c, _ := json.Marshal(command)
	return `{"` + ev + `": [{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": ` + string(c) + `}]}]}`
}

func orderCall() scripted.Turn {
	return scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", map[string]string{"orderId": "A-1024"})}}
}

// lastToolMessage is what the model was told of the call in its last
// request.
func lastToolMessage(t *testing.T, m *scripted.Model) string {
	t.Helper()
	reqs := m.Requests()
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleTool {
			return msgs[i].Content
		}
	}
	t.Fatal("no tool message")
	return ""
}

// TestPreToolUseExit2StopsTheCall: a PreToolUse hook matched as
// mcp__SERVER__TOOL gets the call on stdin; its exit 2 stops the call and
// its stderr reaches the model.
func TestPreToolUseExit2StopsTheCall(t *testing.T) {
	m := scripted.New(orderCall(), scripted.Turn{Text: "blocked"})
	h, dir, calls := hookHost(t, m, hooksOf("PreToolUse", "mcp__shop__getOrderStatus", "cat > in.json; echo 'order lookups are paused' >&2; exit 2"), "", nil, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where is A-1024?"}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 {
		t.Error("the blocked call ran")
	}
	if got := lastToolMessage(t, m); !strings.Contains(got, "order lookups are paused") {
		t.Errorf("the model was told %s", got)
	}
	var in map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "in.json"))
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("hook input %q: %v", b, err)
	}
	if in["hook_event_name"] != "PreToolUse" || in["session_id"] != "s1" || in["tool_name"] != "getOrderStatus" ||
		in["tool_input"].(map[string]any)["orderId"] != "A-1024" {
		t.Errorf("hook input %v", in)
	}
}

// TestPostToolUseSeesTheResponse: PostToolUse gets tool_response, and its
// additionalContext goes to the model with the result.
func TestPostToolUseSeesTheResponse(t *testing.T) {
	m := scripted.New(orderCall(), scripted.Turn{Text: "ok"})
	h, dir, calls := hookHost(t, m, hooksOf("PostToolUse", "getOrderStatus",
		`cat > out.json; echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "logged"}}'`), "", nil, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where is A-1024?"}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Errorf("%d calls", calls.Load())
	}
	var in struct {
		ToolResponse map[string]any `json:"tool_response"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out.json"))
	if err := json.Unmarshal(b, &in); err != nil || in.ToolResponse["status"] != "shipped" {
		t.Errorf("hook input %s (%v)", b, err)
	}
	if got := lastToolMessage(t, m); !strings.Contains(got, "shipped") || !strings.HasSuffix(got, "logged") {
		t.Errorf("the model was told %s", got)
	}
}

// TestUserPromptSubmitBlocks: a block stops the prompt with the reason;
// nothing reaches the model or the store.
func TestUserPromptSubmitBlocks(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "never"})
	h, _, _ := hookHost(t, m, hooksOf("UserPromptSubmit", "", `echo '{"decision": "block", "reason": "no order numbers here"}'`), "", nil, nil)
	_, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where is A-1024?"})
	var be *HookBlockedError
	if !errors.As(err, &be) || be.Reason != "no order numbers here" {
		t.Fatalf("err %v", err)
	}
	if len(m.Requests()) != 0 {
		t.Error("the model was called")
	}
	// The chat API's whole-conversation turns are held to it as well.
	_, err = h.Run(context.Background(), Turn{Conversation: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if !errors.As(err, &be) {
		t.Fatalf("conversation: err %v", err)
	}
}

// TestPreToolUseAllowAndDenyRule: an allow answers the question the
// policy would ask, but a deny rule still wins; a deny decision stops the
// call; updatedInput replaces the arguments.
func TestPreToolUseAllowAndDenyRule(t *testing.T) {
	pat := func(s string) guard.Pattern { p, _ := guard.ParsePattern(s); return p }
	allow := `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"orderId": "B-2"}}}'`
	ask := []guard.Rule{{Pattern: pat("shop:*"), Permission: guard.Ask, Source: "test"}}
	m := scripted.New(orderCall(), scripted.Turn{Text: "ok"})
	h, _, calls := hookHost(t, m, hooksOf("PreToolUse", "getOrderStatus", allow), "", ask, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where?"}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || !strings.Contains(lastToolMessage(t, m), `"B-2"`) {
		t.Errorf("calls %d; model told %s", calls.Load(), lastToolMessage(t, m))
	}

	deny := []guard.Rule{{Pattern: pat("shop:getOrderStatus"), Permission: guard.Deny, Source: "test"}}
	m = scripted.New(orderCall(), scripted.Turn{Text: "ok"})
	h, _, calls = hookHost(t, m, hooksOf("PreToolUse", "getOrderStatus", allow), "", deny, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where?"}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || !strings.Contains(lastToolMessage(t, m), "permission policy denies") {
		t.Errorf("calls %d; model told %s", calls.Load(), lastToolMessage(t, m))
	}

	m = scripted.New(orderCall(), scripted.Turn{Text: "ok"})
	h, _, calls = hookHost(t, m, hooksOf("PreToolUse", "get.*", `echo '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "not today"}}'`), "", nil, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where?"}); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || !strings.Contains(lastToolMessage(t, m), "not today") {
		t.Errorf("calls %d; model told %s", calls.Load(), lastToolMessage(t, m))
	}
}

// TestStopHookKeepsGoing: a Stop hook that blocks keeps the turn going with
// its reason, stop_hook_active tells it so, and it stops after
// maxStopContinues in a row even if the hook never lets go.
func TestStopHookKeepsGoing(t *testing.T) {
	once := `grep -q '"stop_hook_active":true' || echo '{"decision": "block", "reason": "check the date"}'`
	m := scripted.New(scripted.Turn{Text: "first"}, scripted.Turn{Text: "second"})
	h, _, _ := hookHost(t, m, hooksOf("Stop", "", once), "", nil, nil)
	res, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	if res.Answer != "second" || len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, "check the date") {
		t.Errorf("answer %q after %d requests", res.Answer, len(reqs))
	}

	m = scripted.New(scripted.Turn{Text: "a"}, scripted.Turn{Text: "b"}, scripted.Turn{Text: "c"}, scripted.Turn{Text: "d"}, scripted.Turn{Text: "e"})
	h, _, _ = hookHost(t, m, hooksOf("Stop", "", `echo '{"decision": "block", "reason": "more"}'`), "", nil, nil)
	if res, err = h.Run(context.Background(), Turn{Session: "s1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if res.Answer != "d" || len(m.Requests()) != 1+maxStopContinues {
		t.Errorf("answer %q after %d requests", res.Answer, len(m.Requests()))
	}
}

// TestProjectHooksNeedApproval: the hooks of the project's .mcp.json do
// not run unless approved.
func TestProjectHooksNeedApproval(t *testing.T) {
	project := `{"mcpServers": {}, "hooks": ` + hooksOf("UserPromptSubmit", "", `echo '{"decision": "block", "reason": "project"}'`) + `}`
	for _, approved := range []bool{false, true} {
		m := scripted.New(scripted.Turn{Text: "ok"})
		var asked []string
		h, _, _ := hookHost(t, m, `{}`, project, nil, func(f mcpconfig.ScopedHooks) bool {
			asked = append(asked, f.Hooks.Commands()...)
			return approved
		})
		_, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"})
		if blocked := err != nil; blocked != approved {
			t.Errorf("approved %v: err %v", approved, err)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "project") {
			t.Errorf("asked about %q", asked)
		}
	}
	m := scripted.New(scripted.Turn{Text: "ok"})
	h, _, _ := hookHost(t, m, `{}`, project, nil, nil)
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"}); err != nil {
		t.Errorf("without an approver: %v", err)
	}
}

// TestPermissionRequestAnswers: when the policy asks, a PermissionRequest
// hook's decision answers for the user (there is no confirmer here, so
// without it the call would be refused), and Notification fires first.
func TestPermissionRequestAnswers(t *testing.T) {
	pat, _ := guard.ParsePattern("shop:*")
	ask := []guard.Rule{{Pattern: pat, Permission: guard.Ask, Source: "test"}}
	for behavior, ran := range map[string]int32{"allow": 1, "deny": 0} {
		m := scripted.New(orderCall(), scripted.Turn{Text: "ok"})
		cfg := `{"PermissionRequest": [{"matcher": "mcp__shop__getOrderStatus", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"` + behavior + `\", \"message\": \"by hook\"}}}'"}]}],
			"Notification": [{"hooks": [{"type": "command", "command": "cat > note.json"}]}]}`
		h, dir, calls := hookHost(t, m, cfg, "", ask, nil)
		if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where?"}); err != nil {
			t.Fatal(err)
		}
		if calls.Load() != ran {
			t.Errorf("%s: %d calls; model told %s", behavior, calls.Load(), lastToolMessage(t, m))
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "note.json")); !strings.Contains(string(b), `"message":"agentapp needs your permission to use getOrderStatus"`) {
			t.Errorf("notification input %s", b)
		}
	}
}

// TestSessionStartAndPreCompact: SessionStart runs on a session's first
// turn only, its output going to the model; PreCompact runs before /compact
// folds, with its trigger.
func TestSessionStartAndPreCompact(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	cfg := `{"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo branch main >> start.log; echo branch main"}]}],
		"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "cat > compact.json"}]}]}`
	h, dir, _ := hookHost(t, m, cfg, "", nil, nil)
	for range 2 {
		if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := m.Requests()
	if first := reqs[0].Messages[0].Content; !strings.Contains(first, "branch main") {
		t.Errorf("first request %q", first)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "start.log")); string(b) != "branch main\n" {
		t.Errorf("SessionStart ran %q", b)
	}
	if _, err := h.Compact(context.Background(), "s1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "compact.json")); !strings.Contains(string(b), `"trigger":"manual"`) || !strings.Contains(string(b), `"session_id":"s1"`) {
		t.Errorf("PreCompact input %s", b)
	}
}

// TestPreToolUseAsk: "ask" puts the call to the user even where the policy
// would run it, once; a no stops it.
func TestPreToolUseAsk(t *testing.T) {
	ask := `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "large order"}}'`
	for _, approve := range []bool{true, false} {
		m := scripted.New(orderCall(), scripted.Turn{Text: "ok"})
		h, _, calls := hookHost(t, m, hooksOf("PreToolUse", "getOrderStatus", ask), "", nil, nil)
		c := &askedConfirmer{approve: approve}
		if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where?", Confirmer: c}); err != nil {
			t.Fatal(err)
		}
		want := int32(0)
		if approve {
			want = 1
		}
		if c.asked.Load() != 1 || calls.Load() != want {
			t.Errorf("approve %v: asked %d times, %d calls", approve, c.asked.Load(), calls.Load())
		}
	}
}

// TestCallRunsHooks: a call outside a turn (the terminal's /call, a view's
// call) runs the hooks as a model's call does: PreToolUse's exit 2 stops
// it with the reason, PostToolUse sees the response, and a
// PermissionRequest hook answers when the policy asks.
func TestCallRunsHooks(t *testing.T) {
	ctx := agent.WithSession(context.Background(), "s1")
	call := func(h *Host) string {
		t.Helper()
		tool, ok := h.Tools().Refresh(ctx).Get("getOrderStatus")
		if !ok {
			t.Fatal("no getOrderStatus in the table")
		}
		out, err := h.Call(ctx, tool, json.RawMessage(`{"orderId":"A-1024"}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := agent.FormatOutput(out)
		return s
	}

	h, dir, calls := hookHost(t, scripted.New(), hooksOf("PreToolUse", "mcp__shop__getOrderStatus", "cat > in.json; echo 'order lookups are paused' >&2; exit 2"), "", nil, nil)
	if got := call(h); calls.Load() != 0 || !strings.Contains(got, "order lookups are paused") {
		t.Errorf("PreToolUse exit 2: %d calls, result %s", calls.Load(), got)
	}
	var in map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "in.json"))
	if json.Unmarshal(b, &in) != nil || in["session_id"] != "s1" || in["tool_name"] != "getOrderStatus" {
		t.Errorf("PreToolUse input %s", b)
	}

	h, dir, calls = hookHost(t, scripted.New(), hooksOf("PostToolUse", "getOrderStatus", "cat > out.json"), "", nil, nil)
	if got := call(h); calls.Load() != 1 || !strings.Contains(got, "shipped") {
		t.Errorf("PostToolUse: %d calls, result %s", calls.Load(), got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out.json")); !strings.Contains(string(b), `"tool_response"`) || !strings.Contains(string(b), "shipped") {
		t.Errorf("PostToolUse input %s", b)
	}

	pat, _ := guard.ParsePattern("shop:*")
	ask := []guard.Rule{{Pattern: pat, Permission: guard.Ask, Source: "test"}}
	cfg := `{"PermissionRequest": [{"matcher": "getOrderStatus", "hooks": [{"type": "command", "command": "cat > perm.json; echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PermissionRequest\", \"decision\": {\"behavior\": \"allow\"}}}'"}]}]}`
	h, dir, calls = hookHost(t, scripted.New(), cfg, "", ask, nil)
	if got := call(h); calls.Load() != 1 {
		t.Errorf("PermissionRequest allow: %d calls, result %s", calls.Load(), got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "perm.json")); !strings.Contains(string(b), `"hook_event_name":"PermissionRequest"`) {
		t.Errorf("PermissionRequest input %s", b)
	}
}
