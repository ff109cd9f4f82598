package main

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestBrowserPageDetails drives the page on a desktop-sized screen: the
// first visit fetches nothing that fails (no 404 for a session it does not
// have yet), a short question makes a short bubble and a long one a wide
// bubble, and the operator view shows the hand-off's time in the
// browser's time zone, not in UTC.
func TestBrowserPageDetails(t *testing.T) {
	base := startWeb(t)
	b := openBrowser(t, browserOptions{Lang: "en-US"})
	ctx, do, eval, shot := b.ctx, b.do, b.eval, b.shot
	ask := func(text string, n int) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.Poll[chromedp.Void](`document.querySelectorAll('.msg.assistant[data-done]').length >= `+strconv.Itoa(n), chromedp.WithPollingTimeout(60*time.Second)),
		)
	}

	do("open the page", chromedp.EmulateViewport(1200, 900), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	// Every fetch of the first visit succeeded (responseStatus is what the
	// browser logs as "Failed to load resource" when it is 4xx or 5xx).
	if failed := eval(`performance.getEntriesByType('resource').filter(e => e.responseStatus >= 400).map(e => e.responseStatus + ' ' + e.name).join('; ')`); failed != "" {
		t.Errorf("the first visit fetched what failed: %s", failed)
	}
	if n := eval(`String(performance.getEntriesByType('resource').filter(e => e.name.endsWith('/api/sessions/current')).length)`); n != "1" {
		t.Errorf("the page asked for the current session %s times, want once", n)
	}

	do("say hi", ask("hi", 1))
	do("ask a long question", ask(strings.Repeat("where is my order and when will it arrive, ", 6), 2))
	shot("bubbles")
	widths := strings.Fields(eval(`[...document.querySelectorAll('.msg.user')].map(e => Math.round(e.getBoundingClientRect().width)).join(' ') + ' ' + Math.round(document.querySelector('#log').getBoundingClientRect().width)`))
	if len(widths) != 3 {
		t.Fatalf("bubble widths %v", widths)
	}
	short, _ := strconv.Atoi(widths[0])
	long, _ := strconv.Atoi(widths[1])
	log, _ := strconv.Atoi(widths[2])
	t.Logf("bubble of %q: %d px; of the long line: %d px; the log: %d px", "hi", short, long, log)
	if short <= 0 || short > 80 {
		t.Errorf("the bubble of \"hi\" is %d px wide, want it to fit its text (≤ 80 px)", short)
	}
	if long < log*8/10 || long > log {
		t.Errorf("the bubble of a long line is %d px wide in a log of %d px, want it near the max width", long, log)
	}

	do("ask for a person", ask("我要转人工", 3))
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Shanghai"}); err != nil {
		t.Fatalf("set the time zone: %v", err)
	}
	do("open the operator view", chromedp.Navigate(base+"/operator"), chromedp.WaitVisible(chromedp.CSS("article h3")))
	shot("operator")
	shown := eval(`document.querySelector('article h3 small').textContent`)
	want := eval(`(() => {
		const dt = document.querySelector('article time')?.getAttribute('datetime');
		if (!dt) return 'a <time datetime> element';
		return new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short', timeZone: 'Asia/Shanghai'}).format(new Date(dt));
	})()`)
	t.Logf("operator view time: %q (datetime %s)", shown, eval(`document.querySelector('article time')?.getAttribute('datetime') ?? 'none'`))
	if shown != want || strings.Contains(shown, "UTC") || strings.Contains(shown, "T") {
		t.Errorf("the hand-off's time reads %q, want %q (the browser's zone, Asia/Shanghai)", shown, want)
	}
}

// TestBrowserHeaderPhoneWidth: on a phone-sized screen the English header
// keeps its title on one line and its buttons in one row, and does not grow
// when the first answer's token count appears under the title.
func TestBrowserHeaderPhoneWidth(t *testing.T) {
	base := startWeb(t)
	b := openBrowser(t, browserOptions{Lang: "en-US"})
	do, eval, shot := b.do, b.eval, b.shot
	do("open the page on a phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "en" {
		do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	}
	measure := func() (header, title, lineHeight, buttonRows string) {
		return eval(`String(Math.round(document.querySelector('header').getBoundingClientRect().height))`),
			eval(`String(Math.round(document.querySelector('header h1').getBoundingClientRect().height))`),
			eval(`String(Math.round(parseFloat(getComputedStyle(document.querySelector('header h1')).fontSize) * 1.6))`),
			eval(`String(new Set([...document.querySelectorAll('header .tools button')].map(b => Math.round(b.getBoundingClientRect().top))).size)`)
	}
	h0, title, line, rows := measure()
	shot("1-header")
	if ti, _ := strconv.Atoi(title); ti > mustAtoi(t, line) {
		t.Errorf("the title is %s px high, more than one line (%s px)", title, line)
	}
	if rows != "1" {
		t.Errorf("the header's buttons are in %s rows, want one", rows)
	}
	do("say hi", chromedp.SetValue(chromedp.CSS("#input"), "hi"), chromedp.Click(chromedp.CSS("#send")),
		chromedp.Poll[chromedp.Void](`document.querySelector('#usage-total').textContent !== ''`, chromedp.WithPollingTimeout(60*time.Second)))
	shot("2-header-tokens")
	if h1, _, _, _ := measure(); h1 != h0 {
		t.Errorf("the header grew from %s to %s px when the token count appeared", h0, h1)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
