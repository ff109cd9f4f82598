package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserContextBudget drives the page with a small context window
// (--context-window 4000, the offline model): each answer shows its
// tokens and the header the session's; once the history outgrows the
// window a quiet mark shows where older turns were folded for the model,
// with the summary on click, while every message stays on the page; a
// reload shows the same mark and totals; "/compact" in the chat box folds
// all but the latest turn; the texts follow the language.
func TestBrowserContextBudget(t *testing.T) {
	base := startWebWith(t, []string{"--mcp", "shop=" + agentappBin(t) + " serve", "--context-window", "4000"})
	b := openBrowser(t, browserOptions{Lang: "zh-CN"})
	do, eval, shot := b.do, b.eval, b.shot
	answered := func(n int) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelectorAll('.msg.assistant[data-done]').length >= %d`, n), chromedp.WithPollingTimeout(60*time.Second))
	}
	ask := func(text string, n int) {
		t.Helper()
		do("ask "+text, chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")), answered(n))
	}
	// mark describes the fold mark: its text and the index, among the
	// user messages, of the one it stands before.
	const mark = `(() => {
		const m = document.querySelector('#log .fold-mark');
		if (!m) return '';
		const users = [...document.querySelectorAll('#log .msg.user')];
		let next = m.nextElementSibling;
		while (next && !next.matches('.msg.user')) next = next.nextElementSibling;
		return users.indexOf(next) + ' ' + m.querySelector('.fold-text').textContent;
	})()`
	zhMark := regexp.MustCompile(`^(\d+) ✂ 较早的对话已为模型压缩成摘要（(\d+) 条消息，约 [\d,]+ tokens → 约 [\d,]+ tokens）；完整记录仍保留在这里$`)

	do("open the page", chromedp.EmulateViewport(900, 1000), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "zh-CN" {
		do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}
	if got := eval(`document.querySelector('#compact').textContent + '|' + document.querySelector('#usage-total').textContent`); got != "压缩|" {
		t.Errorf("compact button and totals before any turn: %q", got)
	}
	questions := []string{"出差住宿标准是多少？", "订单 A-1024 到哪了？", "出差住宿标准是多少？", "订单 A-2048 到哪了？", "出差住宿标准是多少？", "订单 A-1024 到哪了？"}
	turns := 0
	for _, q := range questions[:len(questions)-1] {
		turns++
		ask(q, turns)
		usage := eval(`[...document.querySelectorAll('.msg.assistant[data-done]')].pop().querySelector('.usage')?.textContent ?? ''`)
		if !regexp.MustCompile(`^≈输入 [\d,]+ · 输出 [\d,]+ tokens$`).MatchString(usage) {
			t.Errorf("turn %d: the answer's usage line is %q", turns, usage)
		}
		if eval(mark) != "" {
			break
		}
	}
	total := eval(`document.querySelector('#usage-total').textContent`)
	if !regexp.MustCompile(`^本会话 ≈[\d,]+ tokens$`).MatchString(total) {
		t.Errorf("the header's session totals read %q", total)
	}
	got := eval(mark)
	m := zhMark.FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("after %d turns the fold mark is %q; want the Chinese mark before a question", turns, got)
	}
	t.Logf("after %d turns: %s; %s", turns, got, total)
	if n := eval(`String(document.querySelectorAll('#log .msg.user').length)`); n != strconv.Itoa(turns) {
		t.Errorf("%s questions on the page after the fold, want all %d", n, turns)
	}
	shot("1-folded")
	if eval(`String(document.querySelector('.fold-summary').hidden)`) != "true" {
		t.Error("the summary shows before it is asked for")
	}
	do("open the summary", chromedp.Click(chromedp.CSS(".fold-toggle")))
	summary := eval(`document.querySelector('.fold-summary').hidden ? '' : document.querySelector('.fold-summary').innerText`)
	if !strings.Contains(summary, "出差住宿标准是多少") || eval(`document.querySelector('.fold-toggle').textContent`) != "收起摘要" {
		t.Errorf("the opened summary reads %q", summary)
	}
	shot("2-summary")

	// Issue 44, point 10: each answer's token line comes back on reload.
	const lines = `[...document.querySelectorAll('#log .msg.assistant[data-done]')].map(a => a.querySelector('.usage')?.textContent ?? '(none)').join('|')`
	live := eval(lines)
	do("reload", chromedp.Reload(), answered(turns))
	if again := eval(lines); again != live {
		t.Errorf("after a reload the answers' token lines read\n%s\nwant as drawn live\n%s", again, live)
	}
	shot("3-reloaded")
	if again := eval(mark); again != got {
		t.Errorf("after a reload the mark is %q, want %q as before", again, got)
	}
	if again := eval(`document.querySelector('#usage-total').textContent`); again != total {
		t.Errorf("after a reload the totals read %q, want %q (the page's sum of its turns)", again, total)
	}

	// One more turn, then /compact folds the one before it.
	turns++
	ask(questions[turns-1], turns)
	do("type /compact", chromedp.WaitEnabled(chromedp.CSS("#send")), chromedp.SetValue(chromedp.CSS("#input"), "/compact"), chromedp.Click(chromedp.CSS("#send")),
		chromedp.Poll[chromedp.Void](`(document.querySelector('#log .fold-mark .fold-text')?.textContent ?? '') !== `+strconv.Quote(strings.SplitN(eval(mark), " ", 2)[1]), chromedp.WithPollingTimeout(30*time.Second)))
	compacted := zhMark.FindStringSubmatch(eval(mark))
	if compacted == nil || compacted[1] != strconv.Itoa(turns-1) {
		t.Errorf("after /compact the mark is %q; want it before the latest question (%d)", eval(mark), turns-1)
	} else if before, after := atoi(t, m[2]), atoi(t, compacted[2]); after <= before {
		t.Errorf("after /compact %d messages folded, before %d: want more", after, before)
	}
	if n := eval(`String(document.querySelectorAll('#log .msg.user').length)`); n != strconv.Itoa(turns) {
		t.Errorf("/compact added a message: %s questions, want %d", n, turns)
	}
	// Seven requests in a few seconds can empty the session's bucket (6,
	// then one every 3 s): the page then says when to try again, and the
	// test does, as a user would.
	lastNote := `([...document.querySelectorAll('#log .note')].pop()?.textContent ?? '')`
	var note string
	for try := 0; ; try++ {
		notes := eval(`String(document.querySelectorAll('#log .note').length)`)
		do("compact again", chromedp.Click(chromedp.CSS("#compact")),
			chromedp.Poll[chromedp.Void](`String(document.querySelectorAll('#log .note').length) !== `+strconv.Quote(notes), chromedp.WithPollingTimeout(30*time.Second)))
		note = eval(lastNote)
		if !strings.Contains(note, "try again in") || try == 5 {
			break
		}
		time.Sleep(3 * time.Second)
	}
	if !strings.Contains(note, "没有可压缩的较早对话") {
		t.Errorf("compacting with nothing earlier says %q", note)
	}
	shot("4-compacted")

	do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	en := eval(mark)
	if !regexp.MustCompile(`^\d+ ✂ Earlier turns were summarized for the model \(\d+ messages, ~[\d,]+ tokens → ~[\d,]+ tokens\); the full transcript stays here$`).MatchString(en) {
		t.Errorf("the English mark reads %q", en)
	}
	if u := eval(`[...document.querySelectorAll('.usage')].pop().textContent + '|' + document.querySelector('#usage-total').textContent + '|' + document.querySelector('#compact').textContent + '|' + ` + lastNote + ``); !regexp.MustCompile(`^≈in [\d,]+ · out [\d,]+ tokens\|Session: ≈[\d,]+ tokens\|Compact\|Nothing earlier to compact: `).MatchString(u) {
		t.Errorf("the English usage, totals and button read %q", u)
	}
	shot("5-english")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
