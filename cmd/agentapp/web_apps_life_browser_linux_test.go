package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAppsLifecycle drives a view's display modes and its
// cancellation in headless Chromium, with the quiet view of
// testdata/appview: ui/initialize announces inline and fullscreen; a
// request for full screen is answered with the mode set, fills the page
// and tells the view its new mode and size; a resized page tells it the
// new size; the host's close button brings it back inline; "pip" is
// answered inline and an unknown mode is refused; and a view whose call
// is still running when the turn fails (the turn timeout) is told the call
// was cancelled. Then, on a second host on the same database without the
// probe's server, a reload still shows which server the view's step used
// and says its view is unavailable; and back on the first host, a new
// conversation tears the view down (it answers by calling a tool).
func TestBrowserAppsLifecycle(t *testing.T) {
	chromiumPath(t)     // skips at once where there is no Chromium, before any server starts
	data := t.TempDir() // shared with a second host below
	notes := filepath.Join(t.TempDir(), "notes")
	base := startWebWith(t, []string{
		"--mcp", "probe=" + appViewServer.Path(t) + " -notes " + notes,
		"--allow", "probe:*",
		"--turn-timeout", "8s",
	}, "AGENTAPP_DATA_DIR="+data)
	// The views' frames stay in the page's process, so that the test can
	// read inside them.
	page := openBrowser(t, browserOptions{Lang: "en-US", Frames: true, Timeout: 3 * time.Minute})
	ctx := page.ctx

	do := page.do
	eval := page.eval
	ask := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
		)
	}
	ready := func(tool string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`!!document.querySelector('.view[data-tool=%q][data-state="ready"]')`, tool), chromedp.WithPollingTimeout(60*time.Second))
	}
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
	waitViewText := func(tool, sel, what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for range 150 {
			if s = viewText(tool, sel); ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the view of %s: %s: %q", tool, what, s)
		return s
	}
	click := func(tool, sel string) {
		t.Helper()
		do("click "+sel+" in the view of "+tool, chromedp.Click(chromedp.CSS(sel), chromedp.FromNode(inView(tool))))
	}
	// told returns the host-context-changed notifications the view got.
	type dims struct {
		Width     float64 `json:"width"`
		Height    float64 `json:"height"`
		MaxHeight float64 `json:"maxHeight"`
	}
	type change struct {
		DisplayMode         string `json:"displayMode"`
		ContainerDimensions *dims  `json:"containerDimensions"`
	}
	told := func(s string) []change {
		var out []change
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			if line == "" {
				continue
			}
			var c change
			if err := json.Unmarshal([]byte(line), &c); err != nil {
				t.Fatalf("host-context-changed %q: %v", line, err)
			}
			out = append(out, c)
		}
		return out
	}
	lastTold := func(ok func(change) bool) func(string) bool {
		return func(s string) bool {
			c := told(s)
			return len(c) > 0 && ok(c[len(c)-1])
		}
	}

	do("open the page", chromedp.EmulateViewport(900, 1000), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "en" {
		do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	}
	do("show the view", ask("use life_probe"), ready("life_probe"))
	if got := viewText("life_probe", "#init"); got != `{"displayMode":"inline","availableDisplayModes":["inline","fullscreen"]}` {
		t.Errorf("ui/initialize's host context: %s", got)
	}
	waitViewText("life_probe", "#result", "no tool result", func(s string) bool { return strings.Contains(s, "shown") })

	// An unknown mode is refused; full screen is set and answered.
	click("life_probe", "#bad")
	waitViewText("life_probe", "#mode", "an unknown mode was not refused", func(s string) bool { return s == "error -32602" })
	click("life_probe", "#full")
	waitViewText("life_probe", "#mode", "full screen was not answered", func(s string) bool { return s == "fullscreen" })
	if got := eval(`(() => { const r = document.querySelector('.view[data-tool="life_probe"]').getBoundingClientRect(); return r.width + "x" + r.height + " of " + innerWidth + "x" + innerHeight; })()`); got != "900x1000 of 900x1000" {
		t.Errorf("the full-screen view's container is %s; want the whole page", got)
	}
	waitViewText("life_probe", "#ctx", "the view was not told it is in full screen", lastTold(func(c change) bool {
		return c.DisplayMode == "fullscreen" && c.ContainerDimensions != nil && c.ContainerDimensions.Width == 900 && c.ContainerDimensions.Height == 1000
	}))
	// A resized page tells the view its container's new size.
	do("resize the page", chromedp.EmulateViewport(700, 800))
	waitViewText("life_probe", "#ctx", "the view was not told the new size", lastTold(func(c change) bool {
		return c.DisplayMode == "fullscreen" && c.ContainerDimensions != nil && c.ContainerDimensions.Width == 700 && c.ContainerDimensions.Height == 800
	}))
	// The host's close button brings it back inline.
	do("close full screen", chromedp.Click(chromedp.CSS(`.view[data-tool="life_probe"] .view-close`)))
	waitViewText("life_probe", "#ctx", "the view was not told it is inline again", lastTold(func(c change) bool {
		return c.DisplayMode == "inline" && c.ContainerDimensions != nil && c.ContainerDimensions.MaxHeight > 0
	}))
	if n := eval(`String(document.querySelectorAll('.view.fullscreen, .view-close').length)`); n != "0" {
		t.Errorf("%s full-screen containers or close buttons left after closing", n)
	}
	// Picture-in-picture is answered with the mode set: inline.
	click("life_probe", "#pip")
	waitViewText("life_probe", "#mode", "pip was not answered inline", func(s string) bool { return s == "inline" })

	// A call still running when the turn fails: its view is told.
	do("run the slow call", ask("use slow_probe"), ready("slow_probe"))
	if got := viewText("slow_probe", "#cancelled"); got != "" {
		t.Fatalf("the view was cancelled before the turn ended: %q", got)
	}
	do("wait for the turn to fail", chromedp.Poll[chromedp.Void](`document.querySelectorAll('.msg.assistant.error').length >= 1`, chromedp.WithPollingTimeout(60*time.Second)))
	got := waitViewText("slow_probe", "#cancelled", "the view of the call the failed turn left running was not told", func(s string) bool { return strings.HasPrefix(s, "cancelled: ") })
	t.Logf("the slow view got %q", got)

	// The same conversation on a host without the probe's server (the
	// session cookie holds for 127.0.0.1 whatever the port).
	other := startWebWith(t, []string{"--turn-timeout", "8s"}, "AGENTAPP_DATA_DIR="+data)
	do("open the conversation where the probe is gone", chromedp.Navigate(other+"/"),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('.view[data-tool="life_probe"][data-state="failed"]')`, chromedp.WithPollingTimeout(60*time.Second)))
	if s := eval(`document.querySelector('.step[data-tool="life_probe"] .server').innerText`); !strings.Contains(s, "probe") {
		t.Errorf("the step of a gone server names %q", s)
	}
	if s := eval(`document.querySelector('.view[data-tool="life_probe"]').innerText`); !strings.Contains(s, `no MCP server named "probe" is running`) {
		t.Errorf("the view of a gone server says %q", s)
	}

	// Back on the first host: a new conversation tears the view down.
	teardowns := func() int {
		b, err := os.ReadFile(notes)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Count(string(b), `"told":"teardown"`)
	}
	do("open the conversation again", chromedp.Navigate(base+"/"), ready("life_probe"))
	waitViewText("life_probe", "#result", "no tool result after the reload", func(s string) bool { return strings.Contains(s, "shown") })
	before := teardowns() // leaving a page tells its views too, when it can
	do("start a new conversation", chromedp.Click(chromedp.CSS("#new")), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	for i := 0; teardowns() == before; i++ {
		if i == 100 {
			t.Fatalf("the view was not told to tear down (%d notes before and after)", before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if b, _ := os.ReadFile(notes); !strings.Contains(string(b), `"result":"{\"life\":\"shown\"}"`) {
		t.Errorf("the teardown notes: %s", b)
	}
}
