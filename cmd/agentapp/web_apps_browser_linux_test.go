package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/chromedp/chromedp"
)

// appViewServer is the hostile MCP Apps server of testdata/appview.
var appViewServer = &testkit.Binary{Pkg: "github.com/agentapp/agentapp/cmd/agentapp/testdata/appview"}

// appPeer returns the bin of an official MCP Apps example server.
func appPeer(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "peers", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed; run bash .ci/install-peers", name)
		}
		t.Skipf("%s is not installed; run bash .ci/install-peers (needs node and npm)", name)
	}
	return p
}

// TestBrowserApps drives MCP Apps views in headless Chromium: the views of
// server-basic-vanillajs and server-budget-allocator render with their
// tool's result; the basic view's button calls its server's tool through
// the page's approval (Deny honoured, Allow answered); a hostile view
// (testdata/appview) gets nothing from another server's tool, a tool
// hidden from views, an outside address, the page's cookies or DOM, and
// is cut off when it floods; its ui/message lands in the history; the
// view of a failed call is told it was cancelled; and a reload shows the
// views again.
func TestBrowserApps(t *testing.T) {
	chromiumPath(t) // skips at once where there is no Chromium, before any server starts
	basic, budget := appPeer(t, "mcp-server-basic-vanillajs"), appPeer(t, "mcp-budget-allocator-server")
	var outside atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		outside.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "reached")
	}))
	defer target.Close()
	base := startWebWith(t, []string{
		"--mcp", "basic=" + basic + " --stdio",
		"--mcp", "budget=" + budget + " --stdio",
		"--mcp", "probe=" + appViewServer.Path(t) + " -target " + target.URL + "/secret",
		// Their tools are not declared read-only, so the default policy
		// would ask; get-time's question comes from AGENT_GUARD_CONFIRM.
		"--allow", "budget:*", "--allow", "probe:*",
	}, "AGENT_GUARD_CONFIRM=get-time")

	// The views' frames stay in the page's process, so that the test can
	// read inside them.
	page := openBrowser(t, browserOptions{Lang: "en-US", Frames: true, Timeout: 4 * time.Minute})
	ctx := page.ctx
	shots := page.shots

	do := page.do
	eval := page.eval
	shot := func(name string) {
		t.Helper()
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(shots, name+".png")
		if err := os.WriteFile(p, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", p)
	}
	ask := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
		)
	}
	answered := func(n int) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('.msg.assistant[data-done]').length >= %d`, n), chromedp.WithPollingTimeout(60*time.Second))
	}
	ready := func(tool string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`!!document.querySelector('.view[data-tool=%q][data-state="ready"]')`, tool), chromedp.WithPollingTimeout(60*time.Second))
	}
	// inView returns the inner document's root node of tool's (last) view:
	// page → proxy iframe → view iframe.
	inView := func(tool string) *chromedp.Node {
		t.Helper()
		outer, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(fmt.Sprintf(`.view[data-tool=%q] iframe`, tool))))
		if err != nil || len(outer) == 0 {
			t.Fatalf("no view of %s: %v", tool, err)
		}
		inner, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[len(outer)-1])))
		if err != nil || len(inner) == 0 {
			t.Fatalf("no inner frame in the view of %s: %v", tool, err)
		}
		return inner[0]
	}
	viewText := func(tool, sel string) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		s, err := chromedp.Run(tctx, chromedp.TextContent(chromedp.CSS(sel), chromedp.FromNode(inView(tool))))
		if err != nil {
			t.Fatalf("text of %s in the view of %s: %v", sel, tool, err)
		}
		return strings.TrimSpace(s)
	}
	// waitViewText polls the view's text until ok accepts it.
	waitViewText := func(tool, sel, what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for range 100 {
			if s = viewText(tool, sel); ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the view of %s: %s: %q", tool, what, s)
		return s
	}
	isTime := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d`).MatchString
	pending := `.approval:not([data-decision])`

	do("open the page", chromedp.EmulateViewport(900, 1400), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "en" {
		do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	}

	// 1. The basic view renders with the tool's result.
	do("ask for the time", ask("use get-time"), chromedp.WaitVisible(chromedp.CSS(pending+" button.allow")))
	do("allow the model's call", chromedp.Click(chromedp.CSS(pending+" button.allow")), answered(1), ready("get-time"))
	first := waitViewText("get-time", "#server-time", "no time from the tool result", isTime)
	shot("1-basic-view")

	// 2. Its button calls get-time: the approval says the view asked, and
	// Deny is honoured.
	do("click the view's button", chromedp.Click(chromedp.CSS("#get-time-btn"), chromedp.FromNode(inView("get-time"))),
		chromedp.WaitVisible(chromedp.CSS(pending+" button.deny")))
	if q := eval(`document.querySelector('` + pending + ` .question').innerText`); !strings.Contains(q, "asked by the view") || !strings.Contains(q, "get-time") {
		t.Errorf("the view's approval reads %q; want the tool and that the view asked", q)
	}
	shot("2-view-approval")
	do("deny", chromedp.Click(chromedp.CSS(pending+" button.deny")))
	waitViewText("get-time", "#server-time", "Deny did not reach the view as an error", func(s string) bool { return s == "[ERROR]" })
	do("click again", chromedp.Click(chromedp.CSS("#get-time-btn"), chromedp.FromNode(inView("get-time"))),
		chromedp.WaitVisible(chromedp.CSS(pending+" button.allow")))
	do("allow", chromedp.Click(chromedp.CSS(pending+" button.allow")))
	second := waitViewText("get-time", "#server-time", "no new time after Allow", isTime)
	if second == first {
		t.Errorf("the view shows the first time %q again after its own call", first)
	}
	shot("3-view-called")

	// 3. Another official example: the budget allocator.
	do("ask for the budget", ask("use get-budget-data"), answered(2), ready("get-budget-data"))
	waitViewText("get-budget-data", "body", "the budget view shows no categories", func(s string) bool { return strings.Contains(s, "Marketing") })
	shot("4-budget-view")

	// 4. The hostile view reports what it got, through ui/message.
	do("show the probe", ask("use show_probe"), answered(3), ready("show_probe"))
	do("wait for the probe's report", chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('.msg.user')].some(e => e.innerText.startsWith('PROBE-REPORT '))`, chromedp.WithPollingTimeout(90*time.Second)), answered(4))
	shot("5-probe")
	raw := strings.TrimPrefix(eval(`[...document.querySelectorAll('.msg.user')].find(e => e.innerText.startsWith('PROBE-REPORT ')).innerText`), "PROBE-REPORT ")
	var rep map[string]any
	if err := json.Unmarshal([]byte(raw), &rep); err != nil {
		t.Fatalf("the probe's report %q: %v", raw, err)
	}
	t.Logf("probe report: %s", raw)
	want := map[string]func(string) bool{
		"locale":     func(s string) bool { return s == "en-US" },
		"toolResult": func(s string) bool { return s == "ready" },
		"otherServer": func(s string) bool {
			return strings.HasPrefix(s, "error") // get-time is basic's, not the probe's
		},
		"modelOnly": func(s string) bool { return strings.HasPrefix(s, "error") },
		"appOnly":   func(s string) bool { return strings.Contains(s, "reached") },
		"unknown":   func(s string) bool { return s == "error -32601" },
		"huge":      func(s string) bool { return s == "error -32600" },
		"fetch":     func(s string) bool { return s == "blocked" },
		"cookie":    func(s string) bool { return s == "threw" || s == "read:" },
		"parentDOM": func(s string) bool { return s == "threw" },
		"topDOM":    func(s string) bool { return s == "threw" },
		// Issue 43, item 6: no WebRTC in the view, nor through a nested
		// frame it reaches by its element. (One reached by index is
		// beyond what an iframe host can reach; README.)
		"webrtc":      func(s string) bool { return s == "blocked" },
		"webrtcFrame": func(s string) bool { return s == "blocked" },
	}
	for key, ok := range want {
		if got, _ := rep[key].(string); !ok(got) {
			t.Errorf("probe %s: got %q", key, got)
		}
	}
	if n, _ := rep["floodRefused"].(float64); n < 1 {
		t.Errorf("a flood of 300 pings was not cut off (%v refused)", rep["floodRefused"])
	}
	if n := outside.Load(); n != 0 {
		t.Errorf("the view reached the outside address %d times", n)
	}
	// The model is not offered the view-only tool.
	do("name the view-only tool", ask("use probe_app_only"), answered(5))
	if n := eval(`String(document.querySelectorAll('.step[data-tool="probe_app_only"]').length)`); n != "0" {
		t.Errorf("the model called the view-only tool (%s steps)", n)
	}

	// A failed call's view is told the call was cancelled.
	do("show the failing probe", ask("use failing_probe"), answered(6),
		chromedp.Poll[chromedp.Void](`[...document.querySelectorAll('.msg.user')].some(e => /^PROBE-CANCELLED [1-9]/.test(e.innerText))`, chromedp.WithPollingTimeout(60*time.Second)),
		answered(7)) // the message's turn is stored before the reload below
	if st := eval(`document.querySelector('.step[data-tool="failing_probe"]').dataset.state`); st != "error" {
		t.Errorf("the failing probe's step is %q, want error", st)
	}

	// 5. A reload shows the views again, with their results.
	do("reload", chromedp.Reload(), answered(7), ready("get-time"), ready("get-budget-data"))
	waitViewText("get-time", "#server-time", "no time after the reload", isTime)
	shot("6-reloaded")
	if n := eval(`String(document.querySelectorAll('.view').length)`); n != "4" {
		t.Errorf("%s views after the reload, want 4", n)
	}
}
