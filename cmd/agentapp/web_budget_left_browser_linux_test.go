package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserBudgetLeft: with caps set where the service starts
// (--max-session-tokens, --max-cost with the config's pricing), the
// header shows what the session may still use after each answer and
// after a reload, in Chinese and English, at desktop and phone width,
// without the header growing; without caps it shows none (the other
// browser tests run without caps and read the totals alone).
func TestBrowserBudgetLeft(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "agentapp.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {}, "pricing": {"offline-demo": {"input": 3, "output": 15}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startWebWith(t, []string{"--config", cfg, "--mcp", "shop=" + agentappBin(t) + " serve", "--max-session-tokens", "200000", "--max-cost", "2"})
	for _, width := range []int{1000, 390} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b := openBrowser(t, browserOptions{Lang: "zh-CN"})
			do, eval, shot := b.do, b.eval, b.shot
			answered := func(n int) chromedp.Action[chromedp.Void] {
				return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('.msg.assistant[data-done]').length >= %d`, n), chromedp.WithPollingTimeout(60*time.Second))
			}
			view := chromedp.EmulateViewport(int64(width), 900)
			if width < 500 {
				view = chromedp.EmulateViewport(int64(width), 844, chromedp.EmulateMobile)
			}
			do("open the page", view, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
			if eval(`document.documentElement.lang`) != "zh-CN" {
				do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
			}
			height := `String(Math.round(document.querySelector('header').getBoundingClientRect().height))`
			h0 := eval(height)
			if got := eval(`document.querySelector('#budget-left').textContent`); got != "" {
				t.Errorf("budget shown before any answer: %q", got)
			}
			left := func() (int, string) {
				s := eval(`document.querySelector('#budget-left').textContent`)
				m := regexp.MustCompile(`^剩余 ([\d,]+) tokens · 费用 1\.\d\d$`).FindStringSubmatch(s)
				if m == nil {
					t.Fatalf("the header's budget reads %q", s)
				}
				return atoi(t, regexp.MustCompile(`,`).ReplaceAllString(m[1], "")), s
			}
			ask := func(text string, n int) {
				t.Helper()
				do("ask "+text, chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SetValue(chromedp.CSS("#input"), text),
					chromedp.Click(chromedp.CSS("#send")), answered(n))
			}
			ask("订单 A-1024 到哪了？", 1)
			first, _ := left()
			total := eval(`document.querySelector('#usage-total').textContent`)
			used := atoi(t, regexp.MustCompile(`[^\d]`).ReplaceAllString(total, ""))
			if first != 200000-used {
				t.Errorf("after one answer %d tokens left, the header's total %q: want 200000 - %d", first, total, used)
			}
			ask("出差住宿标准是多少？", 2)
			second, text2 := left()
			if second >= first {
				t.Errorf("tokens left %d after the second answer, %d after the first", second, first)
			}
			if title := eval(`document.querySelector('#budget-left').title`); title != "本会话的预算（由服务设置）：200,000 tokens, 费用 2.00" {
				t.Errorf("the budget's title reads %q", title)
			}
			// The line keeps one row and fits or ends in an ellipsis; the
			// header keeps its height.
			if h := eval(height); h != h0 {
				t.Errorf("the header grew from %s to %s px", h0, h)
			}
			if rows := eval(`String(Math.round(document.querySelector('#usage-line').getBoundingClientRect().height / parseFloat(getComputedStyle(document.querySelector('#usage-line')).lineHeight)))`); rows != "1" {
				t.Errorf("the usage line has %s rows", rows)
			}
			if width > 500 && eval(`String(document.querySelector('#usage-line').scrollWidth <= document.querySelector('#usage-line').clientWidth)`) != "true" {
				t.Error("the usage line is cut at desktop width")
			}
			// On a phone the totals give way; the budget stays whole.
			if shown := eval(`getComputedStyle(document.querySelector('#usage-total')).display`); (shown == "none") != (width < 500) {
				t.Errorf("at width %d the totals' display is %s", width, shown)
			}
			if eval(`String(document.querySelector('#usage-line').scrollWidth <= document.querySelector('#usage-line').clientWidth)`) != "true" {
				t.Errorf("the budget left is cut at width %d", width)
			}
			shot(fmt.Sprintf("%d-1-zh", width))

			do("reload", chromedp.Reload(), answered(2))
			if _, again := left(); again != text2 {
				t.Errorf("after a reload the budget reads %q, want %q", again, text2)
			}
			do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
			en := eval(`document.querySelector('#budget-left').textContent`)
			if !regexp.MustCompile(`^Left [\d,]+ tokens, 1\.\d\d$`).MatchString(en) {
				t.Errorf("the English budget reads %q", en)
			}
			if h := eval(height); h != h0 {
				t.Errorf("in English the header is %s px, was %s", h, h0)
			}
			if eval(`String(document.querySelector('#usage-line').scrollWidth <= document.querySelector('#usage-line').clientWidth)`) != "true" {
				t.Errorf("the English budget left is cut at width %d", width)
			}
			shot(fmt.Sprintf("%d-2-en", width))
			do("new conversation", chromedp.Click(chromedp.CSS("#new")),
				chromedp.Poll[chromedp.Void](`document.querySelectorAll('.msg.user').length === 0`, chromedp.WithPollingTimeout(10*time.Second)))
			if got := eval(`document.querySelector('#budget-left').textContent`); got != "" {
				t.Errorf("a new conversation shows the old budget %q", got)
			}
			do("back to Chinese", chromedp.Click(chromedp.CSS("#lang")))
		})
	}
}
