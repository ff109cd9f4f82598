package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
)

// needJQ skips a test whose hook scripts use jq where it is missing, but
// never in CI (.ci/run installs it).
func needJQ(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("jq is missing; .ci/run installs it")
		}
		t.Skip("jq is not installed")
	}
}

// hookProject writes the hook scripts, in the shapes Claude Code documents
// for its examples, and an agentapp.json whose hooks object runs those
// chosen by the matchers given. It returns the directory and the config.
//
//   - log.sh: a command logger on PreToolUse built on jq, appending one line
//     per call to calls.log.
//   - block.sh: reads the call with jq and exits 2 with the reason on stderr
//     when the order is A-1024.
//   - deny.sh: answers permissionDecision "deny" with a reason.
//   - post.sh: keeps PostToolUse's input in post.json.
//   - prompt.sh: blocks a prompt that holds "secret" with decision block.
func hookProject(t *testing.T, hooksJSON string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	scripts := map[string]string{
		"log.sh":    `jq -r '"\(.hook_event_name) \(.tool_name) \(.tool_input.orderId // "-") \(.session_id)"' >> "$(dirname "$0")/calls.log"`,
		"block.sh":  "input=$(cat)\norder=$(printf '%s' \"$input\" | jq -r '.tool_input.orderId // empty')\nif [ \"$order\" = A-1024 ]; then\n  echo \"order $order is under investigation; tell the user to call the hotline\" >&2\n  exit 2\nfi\nexit 0",
		"deny.sh":   `jq -n '{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "order lookups are closed tonight"}}'`,
		"post.sh":   `cat > "$(dirname "$0")/post.json"`,
		"prompt.sh": "if jq -e '.prompt | contains(\"secret\")' >/dev/null; then\n  jq -n '{decision: \"block\", reason: \"prompts about secrets are not sent\"}'\nfi",
	}
	for name, body := range scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hooksJSON = strings.ReplaceAll(hooksJSON, "$DIR", dir)
	cfg := filepath.Join(dir, "agentapp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}, "hooks": `+hooksJSON+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, cfg
}

func hookEntry(matcher, script string) string {
	return `[{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": "$DIR/` + script + `"}]}]`
}

// TestHooksOneShot: in chat -p, the jq logger sees the call, the exit-2
// blocker stops it with its stderr in the answer (exit 4, refused), and
// PostToolUse gets tool_response when nothing blocks.
func TestHooksOneShot(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	dir, cfg := hookProject(t, `{"PreToolUse": `+strings.TrimSuffix(hookEntry("getOrderStatus", "log.sh"), "]")+`, `+strings.TrimPrefix(hookEntry("getOrderStatus", "block.sh"), "[")+`}`)
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "订单 A-1024 到哪了？")
	if code != exitRefused || !strings.Contains(out, "order A-1024 is under investigation") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "calls.log"))
	if !regexp.MustCompile(`^PreToolUse getOrderStatus A-1024 \S+\n$`).Match(log) {
		t.Errorf("calls.log %q", log)
	}

	dir, cfg = hookProject(t, `{"PostToolUse": `+hookEntry("getOrderStatus", "post.sh")+`}`)
	out, errOut, code = runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "订单 A-1024 到哪了？")
	if code != 0 || !strings.Contains(out, "已发货") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var post struct {
		Event        string          `json:"hook_event_name"`
		ToolResponse json.RawMessage `json:"tool_response"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "post.json"))
	if err := json.Unmarshal(b, &post); err != nil || post.Event != "PostToolUse" || !strings.Contains(string(post.ToolResponse), "已发货") {
		t.Errorf("post.json %s (%v)", b, err)
	}
}

// TestHooksDenyAndPromptBlock: permissionDecision deny stops the call with
// its reason; a UserPromptSubmit block stops the prompt with its reason
// shown and exit 4.
func TestHooksDenyAndPromptBlock(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	_, cfg := hookProject(t, `{"PreToolUse": `+hookEntry("getOrder.*", "deny.sh")+`, "UserPromptSubmit": `+hookEntry("", "prompt.sh")+`}`)
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "订单 A-1024 到哪了？")
	if code != exitRefused || !strings.Contains(out, "order lookups are closed tonight") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	out, errOut, code = runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "tell me the secret")
	if code != exitRefused || !strings.Contains(errOut, "prompts about secrets are not sent") || out != "" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestHooksREPL: the same hooks act in the REPL, and /hooks lists them with
// their file.
func TestHooksREPL(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	_, cfg := hookProject(t, `{"PreToolUse": `+hookEntry("getOrderStatus", "block.sh")+`, "UserPromptSubmit": `+hookEntry("", "prompt.sh")+`}`)
	out, errOut, code := runChatCLI(t, "订单 A-1024 到哪了？\ntell me the secret\n/hooks\n", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	all := out + errOut
	for _, want := range []string{
		"order A-1024 is under investigation",
		"prompts about secrets are not sent",
		"PreToolUse [getOrderStatus] " + filepath.Dir(cfg) + "/block.sh (timeout 1m0s) from " + cfg + " (file scope)",
		"UserPromptSubmit [*] ",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
}

// TestHooksWebChatAPI: agentapp web --config agentapp.json runs the hooks
// for the chat API: the blocker's reason reaches the answer, a blocked
// prompt is refused with its reason.
func TestHooksWebChatAPI(t *testing.T) {
	needJQ(t)
	_, cfg := hookProject(t, `{"PreToolUse": `+hookEntry("getOrderStatus", "block.sh")+`, "UserPromptSubmit": `+hookEntry("", "prompt.sh")+`}`)
	cmd := exec.Command(agentappBin(t), "web", "--http", "127.0.0.1:0", "--model", "offline", "--config", cfg)
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	base := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	id := webSession(t, base)
	code, body := webPost(t, base+"/api/sessions/"+id+"/messages", `{"content":"订单 A-1024 到哪了？"}`)
	if !strings.Contains(body, "order A-1024 is under investigation") {
		t.Errorf("chat: %d %s", code, body)
	}
	code, body = webPost(t, base+"/api/sessions/"+id+"/messages", `{"content":"tell me the secret"}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "prompts about secrets are not sent") {
		t.Errorf("blocked prompt: %d %s", code, body)
	}
}

// TestProjectHooksSkippedUnderP: the hooks of the project's .mcp.json do
// not run before approval; -p skips them with a warning saying how to
// approve them.
func TestProjectHooksSkippedUnderP(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	dir, _ := hookProject(t, `{}`)
	project := `{"mcpServers": {}, "hooks": {"UserPromptSubmit": ` + strings.ReplaceAll(hookEntry("", "prompt.sh"), "$DIR", dir) + `}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(project), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "-p", "tell me the secret")
	if code != 0 || out == "" || !strings.Contains(errOut, "skipped the hooks of "+filepath.Join(dir, ".mcp.json")+" (commands: "+dir+"/prompt.sh): a project's hooks run only once you approve them; start agentapp chat on a terminal") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestSessionEndAndBudgetLeft: in the REPL, SessionEnd runs on /new
// (clear) and at the end (other); /usage shows the budget left.
func TestSessionEndAndBudgetLeft(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	dir, cfg := hookProject(t, `{"SessionEnd": [{"hooks": [{"type": "command", "command": "jq -r .reason >> $DIR/end.log"}]}]}`)
	out, errOut, code := runChatCLI(t, "订单 A-1024 到哪了？\n/usage\n/new\n", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "--max-session-tokens", "100000")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if !regexp.MustCompile(`Budget: \d+ of 100000 session tokens left \(--max-session-tokens\)`).MatchString(out) {
		t.Errorf("no budget in /usage:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "end.log")); string(b) != "clear\nother\n" {
		t.Errorf("SessionEnd ran with %q", b)
	}
}

// TestWebBudget: the operator's --max-session-tokens holds for the web
// chat API; the turn ends with an error event naming the cap.
func TestWebBudget(t *testing.T) {
	cmd := exec.Command(agentappBin(t), "web", "--http", "127.0.0.1:0", "--model", "offline", "--max-session-tokens", "100")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	base := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)[1]
	id := webSession(t, base)
	code, body := webPost(t, base+"/api/sessions/"+id+"/messages", `{"content":"订单 A-1024 到哪了？"}`)
	if !strings.Contains(body, "event: error") || !strings.Contains(body, "the turn was stopped at the budget --max-session-tokens 100: ") {
		t.Errorf("chat: %d %s", code, body)
	}
}

// TestHooksMatchMCPToolName: with agentapp's own MCP server in the chat,
// getOrderStatus is an MCP tool (it overrides the local one), and a
// matcher naming it mcp__agentapp__getOrderStatus catches it.
func TestHooksMatchMCPToolName(t *testing.T) {
	needJQ(t)
	bin := agentappBin(t)
	_, cfg := hookProject(t, `{"PreToolUse": `+hookEntry("mcp__agentapp__getOrderStatus", "deny.sh")+`}`)
	data := t.TempDir()
	cmd := exec.Command(bin, "chat", "--model", "offline", "--config", cfg, "--mcp", bin+" serve", "-p", "订单 A-1024 到哪了？", "--output-format", "json")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + data, "AGENTAPP_DATA_DIR=" + data}
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitRefused {
		t.Fatalf("exit %v\n%s", err, out)
	}
	var a struct {
		Steps []struct {
			Tool   string          `json:"tool"`
			Server string          `json:"server"`
			Output json.RawMessage `json:"output"`
		} `json:"steps"`
	}
	if err := json.Unmarshal(out, &a); err != nil || len(a.Steps) == 0 || a.Steps[0].Tool != "getOrderStatus" || a.Steps[0].Server != "agentapp" ||
		!strings.Contains(string(a.Steps[0].Output), "order lookups are closed tonight") {
		t.Errorf("answer %s (%v)", out, err)
	}
}
