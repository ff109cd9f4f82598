package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// failingHook writes a PreToolUse hook on getOrderStatus that exits 1 with
// a line on stderr (Claude Code's non-blocking error, shown to the user)
// and an agentapp.json that runs it; it returns the config.
func failingHook(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fail.sh"), []byte("#!/bin/sh\ncat >/dev/null\necho 'audit log unavailable' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "agentapp.json")
	hooks := `{"PreToolUse": [{"matcher": "getOrderStatus", "hooks": [{"type": "command", "command": "` + dir + `/fail.sh"}]}]}`
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}, "hooks": `+hooks+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHookFailureShownInChat: a hook that exits 1 does not stop the turn;
// the terminal prints a warning line on stderr naming the hook, its exit
// code and its stderr, and stream-json gets a hook_error event.
func TestHookFailureShownInChat(t *testing.T) {
	chatEnv(t)
	cfg := failingHook(t)
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "订单 A-1024 到哪了？")
	if code != 0 || !strings.Contains(out, "已发货") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^agentapp: warning: hook ".*fail\.sh" \(.*\) exited 1: audit log unavailable$`).MatchString(errOut) {
		t.Errorf("no warning line on stderr:\n%s", errOut)
	}
	if strings.Contains(out, "audit log unavailable") {
		t.Errorf("the warning is in the answer on stdout:\n%s", out)
	}
	if n := strings.Count(errOut, "audit log unavailable"); n != 1 {
		t.Errorf("the warning is on stderr %d times:\n%s", n, errOut)
	}

	out, errOut, code = runChatCLI(t, "", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg, "-p", "订单 A-1024 到哪了？", "--output-format", "stream-json")
	if code != 0 || !regexp.MustCompile(`(?m)^\{"type":"hook_error","message":"hook .*exited 1: audit log unavailable"\}$`).MatchString(out) {
		t.Fatalf("exit %d; no hook_error event in\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `"type":"done"`) {
		t.Errorf("the turn did not go on:\n%s", out)
	}
}

// TestHookFailureShownOnWeb: the chat API sends a "hook" event and the
// page shows it as a quiet line under the answer, in the page's language;
// the answer still comes.
func TestHookFailureShownOnWeb(t *testing.T) {
	cfg := failingHook(t)
	base := startWebWith(t, []string{"--config", cfg, "--mcp", "shop=" + agentappBin(t) + " serve"})
	id := webSession(t, base)
	code, body := webPost(t, base+"/api/sessions/"+id+"/messages", `{"content":"订单 A-1024 到哪了？"}`)
	if !regexp.MustCompile(`event: hook\ndata: \{"message":"hook .*exited 1: audit log unavailable"\}`).MatchString(body) || !strings.Contains(body, "event: done") {
		t.Fatalf("chat API: %d %s", code, body)
	}

	b := openBrowser(t, browserOptions{Lang: "zh-CN"})
	do, eval, shot := b.do, b.eval, b.shot
	do("open the page", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "zh-CN" {
		do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}
	do("ask", chromedp.SetValue(chromedp.CSS("#input"), "订单 A-1024 到哪了？"), chromedp.Click(chromedp.CSS("#send")),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll('.msg.assistant[data-done]').length >= 1`, chromedp.WithPollingTimeout(60*time.Second)))
	note := `([...document.querySelectorAll('.msg.assistant .hook-note')].map(e => e.textContent).join('|'))`
	if got := eval(note); !regexp.MustCompile(`^钩子出错（本轮继续）：hook .*exited 1: audit log unavailable$`).MatchString(got) {
		t.Errorf("the page's hook note reads %q", got)
	}
	if got := eval(`[...document.querySelectorAll('.msg.assistant[data-done]')].pop().textContent`); !strings.Contains(got, "已发货") {
		t.Errorf("the answer reads %q", got)
	}
	shot("1-zh")
	do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	if got := eval(note); !strings.HasPrefix(got, "A hook failed (the turn went on): hook ") {
		t.Errorf("the English hook note reads %q", got)
	}
	shot("2-en")
}

// TestCallRunsHooksREPL: /call in the chat runs the PreToolUse hooks as a
// model's call does: the exit-2 blocker stops it with its reason.
func TestCallRunsHooksREPL(t *testing.T) {
	needJQ(t)
	chatEnv(t)
	dir, cfg := hookProject(t, `{"PreToolUse": `+strings.TrimSuffix(hookEntry("getOrderStatus", "log.sh"), "]")+`, `+strings.TrimPrefix(hookEntry("getOrder.*", "block.sh"), "[")+`}`)
	out, errOut, code := runChatCLI(t, "/call getOrderStatus {\"orderId\":\"A-1024\"}\n", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg)
	if code != 0 || !strings.Contains(out+errOut, "order A-1024 is under investigation") || strings.Contains(out, "已发货") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, "calls.log")); !regexp.MustCompile(`^PreToolUse getOrderStatus A-1024 \S+\n$`).Match(log) {
		t.Errorf("calls.log %q", log)
	}
}

// TestCallShowsHookFailure: a hook that fails without blocking around
// /call is shown as in a turn, and the call goes on.
func TestCallShowsHookFailure(t *testing.T) {
	chatEnv(t)
	cfg := failingHook(t)
	out, errOut, code := runChatCLI(t, "/call getOrderStatus {\"orderId\":\"A-1024\"}\n", "chat", "--data-dir", t.TempDir(), "--model", "offline", "--config", cfg)
	if code != 0 || !strings.Contains(out, "已发货") || !regexp.MustCompile(`(?m)^agentapp: warning: hook ".*fail\.sh" \(.*\) exited 1: audit log unavailable$`).MatchString(errOut) ||
		strings.Count(errOut, "audit log unavailable") != 1 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
