package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds a Chromium to drive. In CI (CI=true) a missing one is
// a failure, since .ci/run installs it; elsewhere the test is skipped.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found (looked for /usr/bin/chromium, chromium, chromium-browser, google-chrome); .ci/run installs Debian's chromium package")
	}
	t.Skip("no Chromium on this machine; install Debian's chromium package to run the browser test")
	return ""
}

// artifactsDir is where the screenshots go: $AGENTAPP_ARTIFACTS/<test>
// when set (CI keeps that directory), else a temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if base := os.Getenv("AGENTAPP_ARTIFACTS"); base != "" {
		dir = filepath.Join(base, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// startWeb runs `agentapp web` on a free loopback port with our own MCP
// server connected, and returns its base URL. The process is stopped with
// SIGTERM at cleanup and must exit cleanly.
func startWeb(t *testing.T, env ...string) string {
	t.Helper()
	return startWebWith(t, []string{"--mcp", "shop=" + agentappBin(t) + " serve"}, env...)
}

// startWebWith is startWeb with other arguments than the shop server.
func startWebWith(t *testing.T, args []string, env ...string) string {
	t.Helper()
	bin := agentappBin(t)
	cmd := exec.Command(bin, append([]string{"web", "--http", "127.0.0.1:0", "--model", "offline"}, args...)...)
	cmd.Env = append(os.Environ(), append([]string{"AGENTAPP_DATA_DIR=" + t.TempDir(), "OPENAI_API_KEY="}, env...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	log := &testkit.SyncBuffer{}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
		}
		log.Close()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agentapp web exited with %v; stderr:\n%s", err, log.String())
			}
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Errorf("agentapp web did not stop within 20 s of SIGTERM; stderr:\n%s", log.String())
			<-done
		}
		if left := testkit.LiveGroup(t, cmd.Process.Pid); len(left) > 0 {
			t.Errorf("processes left behind by agentapp web: %v", left)
		}
	})
	text := log.WaitFor(t, "agentapp web on http://", 60*time.Second)
	m := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no address in:\n%s", text)
	}
	return m[1]
}

// TestBrowserChat drives the chat page in headless Chromium: an order
// question with its tool line, a knowledge-base question with numbered
// sources, a confirmed MCP tool allowed and then denied, and the history
// after a reload, with a screenshot of each state.
func TestBrowserChat(t *testing.T) {
	chromium := chromiumPath(t)
	base := startWeb(t, "AGENT_GUARD_CONFIRM=createTicket")
	shots := artifactsDir(t)

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", "zh-CN"),
		chromedp.UserDataDir(profileDir(t)),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	// The timeout bounds the whole browser's life, the test's too.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("evaluate %s: %v", expr, err)
		}
		return v
	}
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100 means PNG
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
		)
	}
	// answered waits until n answers are complete.
	answered := func(n int) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('.msg.assistant[data-done]').length >= %d`, n), chromedp.WithPollingTimeout(60*time.Second))
	}
	const lastAnswer = `[...document.querySelectorAll('.msg.assistant[data-done]')].pop().innerText`
	check := func(what, got, want string) {
		t.Helper()
		if !strings.Contains(got, want) {
			t.Errorf("%s: %q does not contain %q", what, got, want)
		}
	}

	do("open the page on a phone-sized screen",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	// The page speaks the browser's language; this test reads it in
	// Chinese, and switches to English at the end.
	if eval(`document.documentElement.lang`) != "zh-CN" {
		do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}
	check("Chinese page", eval(`document.querySelector('#send').innerText`), "发送")
	shot("0-open")
	do("ask about an order", ask("订单 A-1024 到哪了？"), answered(1))
	shot("1-order")
	check("order answer", eval(lastAnswer), "已发货")
	check("tool line", eval(`[...document.querySelectorAll('.step')].map(e => e.dataset.state + ' ' + e.innerText).join('\n')`), "ok getOrderStatus · shop")

	do("ask the knowledge base", ask("出差住宿标准是多少？"), answered(2))
	shot("2-sources")
	check("knowledge answer", eval(lastAnswer), "[")
	srcs := eval(`[...document.querySelectorAll('.msg.assistant[data-done]')].pop().querySelector('.sources')?.innerText ?? ''`)
	check("sources", srcs, "来源")
	if !regexp.MustCompile(`\[\d+\] 差旅`).MatchString(srcs) {
		t.Errorf("sources %q: no numbered source", srcs)
	}

	do("ask for a ticket", ask("我要投诉，订单 A-1024 的包装破损了"), chromedp.WaitVisible(chromedp.CSS(".approval:not([data-decision]) button.allow")))
	shot("3-approval")
	// The button is pressed from the page's script: a click by
	// coordinates can land beside it while the streaming answer moves it.
	do("allow", chromedp.Evaluate[chromedp.Void](`document.querySelector('.approval:not([data-decision]) button.allow').click()`), answered(3))
	shot("4-allowed")
	if d := eval(`[...document.querySelectorAll('.approval')].pop().dataset.decision`); d != "allowed" {
		t.Errorf("decision %q after Allow", d)
	}
	check("allowed answer", eval(lastAnswer), "TK-")

	do("ask for another ticket", ask("我要投诉，订单 A-2048 一直没有发货"), chromedp.WaitVisible(chromedp.CSS(".approval:not([data-decision]) button.deny")))
	do("deny", chromedp.Click(chromedp.CSS(".approval:not([data-decision]) button.deny")), answered(4))
	shot("5-denied")
	if st := eval(`[...document.querySelectorAll('.step')].pop().dataset.state`); st != "denied" {
		t.Errorf("the denied call's line is %q, want denied", st)
	}
	denied := eval(lastAnswer)
	check("denied answer", denied, "已拒绝")
	check("denied answer", denied, "the user clicked Deny")
	if strings.Contains(denied, "TK-") {
		t.Errorf("the denied complaint still got a ticket: %q", denied)
	}
	t.Logf("answer after Deny: %q", denied)

	// Nothing is wider than the phone's screen.
	if w := eval(`document.documentElement.scrollWidth + ' ' + window.innerWidth`); w != "390 390" {
		t.Errorf("page width and screen width %q, want 390 390", w)
	}

	do("reload", chromedp.Reload(), answered(4))
	shot("6-reloaded")
	if n := eval(`String(document.querySelectorAll('.msg.user').length) + ' ' + document.querySelectorAll('.msg.assistant[data-done]').length`); n != "4 4" {
		t.Errorf("after reload: questions and answers %q, want 4 4", n)
	}
	history := eval(`document.querySelector('#log').innerText`)
	check("the greeting after reload", eval(`document.querySelector('#log > .welcome:first-child')?.innerText ?? ''`), "您好！")
	check("history", history, "订单 A-1024 到哪了？")
	check("history", history, "已发货")
	do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	check("English page", eval(`document.querySelector('#send').innerText + ' ' + document.querySelector('#input').placeholder`), "Send Ask, e.g. where is order A-1024?")
	shot("7-english")
	for _, f := range []string{"0-open", "1-order", "2-sources", "3-approval", "4-allowed", "5-denied", "6-reloaded"} {
		if fi, err := os.Stat(filepath.Join(shots, f+".png")); err != nil || fi.Size() == 0 {
			t.Errorf("screenshot %s missing: %v", f, err)
		}
	}
}

// profileDir is a fresh Chromium profile. Chromium's helpers may still
// write in it for a moment after the browser stops, so its removal is
// retried rather than left to t.TempDir, which would fail the test.
func profileDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentapp-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if err := os.RemoveAll(dir); err == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the Chromium profile %s", dir)
	})
	return dir
}
