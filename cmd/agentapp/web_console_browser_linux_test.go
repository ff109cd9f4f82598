package main

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The operator console and the customer's page in two browser contexts
// (issue 41): the customer's "转人工" appears in the console's waiting
// queue without a reload, the operator takes it over, writes, reads the
// customer's reply in the transcript and hands back with a note; each side
// sees the other live. Screenshots of the console at desktop and phone
// width, and of the customer's page.
func TestBrowserConsole(t *testing.T) {
	base := startWebWith(t, nil)
	cust := openBrowser(t, browserOptions{Lang: "zh-CN"})
	waitFor := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second))
	}
	ask := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
		)
	}
	cust.do("open the customer's page on a phone",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if cust.eval(`document.documentElement.lang`) != "zh-CN" {
		cust.do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}

	// The operator's browser context shares nothing with the customer's.
	octx, cancel := chromedp.NewContext(cust.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	op := &browserPage{t: t, ctx: octx, shots: cust.shots}
	op.do("open the console", chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(base+"/operator"), chromedp.WaitVisible(chromedp.CSS("#waiting")),
		chromedp.SetValue(chromedp.CSS("#op-name"), "小王"))
	if op.eval(`String(document.body.innerText.includes("Refresh"))`) != "false" {
		t.Error("the console still has a Refresh link")
	}

	cust.do("ask for a person", ask("转人工"), waitFor(`document.querySelector('.people-note[data-key="waiting"]') !== null`))
	id := cust.eval(`sessionId`)
	conv := `document.querySelector('article.conv[data-session="` + id + `"]')`
	op.do("the request shows in the queue", waitFor(conv+`?.classList.contains('waiting') === true`))
	op.shot("0-console-waiting")
	op.do("take it over", chromedp.Click(chromedp.CSS(`article.conv[data-session="`+id+`"] button.take`)),
		waitFor(conv+`?.classList.contains('human') === true`))
	cust.do("the customer sees the operator join", waitFor(`[...document.querySelectorAll('.people-note')].some(n => n.innerText.includes('小王'))`))

	sel := `article.conv[data-session="` + id + `"]`
	op.do("write to the customer",
		chromedp.SetValue(chromedp.CSS(sel+" form.reply input"), "您好，我是小王。"),
		chromedp.Click(chromedp.CSS(sel+" form.reply button")))
	cust.do("the customer reads it", waitFor(`document.querySelector('.msg.operator')?.innerText.includes('我是小王') === true`))
	cust.do("the customer answers", ask("我的包裹丢了"), waitFor(`document.querySelector('.msg.queued[data-done]') !== null`))
	op.do("the operator reads the answer", waitFor(conv+`?.querySelector('.transcript')?.innerText.includes('我的包裹丢了') === true`))

	// A refresh of the lists (here: a second customer joins the queue)
	// keeps the held card as it is: its transcript stays filled and the
	// operator's unsent reply stays in its box. It used to rebuild the
	// card, so the transcript was empty until it was read again.
	op.eval(conv + `.dataset.mark = "kept"`)
	op.do("start a reply", chromedp.SetValue(chromedp.CSS(sel+" form.reply input"), "稍等"))
	cust.eval(`(async () => {
		const r = await fetch("/api/sessions", { method: "POST" });
		const id = (await r.json()).id;
		const m = await fetch("/api/sessions/" + id + "/messages", { method: "POST",
			headers: { "Content-Type": "application/json" }, body: JSON.stringify({ content: "转人工" }) });
		await m.text();
	})(), "started"`)
	op.do("the second customer shows in the queue", waitFor(`document.querySelectorAll('#waiting article.conv.waiting').length === 1`))
	transcriptShown := func(what string) {
		t.Helper()
		// Every message of the conversation is in the held card's
		// transcript, and the box has a height on the page.
		op.do(what, waitFor(`(() => {
			const box = `+conv+`?.querySelector('.transcript');
			if (!box || box.getBoundingClientRect().height < 40) return false;
			const text = box.innerText;
			return ['转人工', 'TK-', '您好，我是小王。', '我的包裹丢了'].every((s) => text.includes(s));
		})()`))
	}
	transcriptShown("the held transcript is shown after the refresh")
	if got := op.eval(conv + `.dataset.mark || "rebuilt"`); got != "kept" {
		t.Errorf("a refresh of the lists rebuilt the held card (%s)", got)
	}
	if got := op.eval(`document.querySelector('` + sel + ` form.reply input').value`); got != "稍等" {
		t.Errorf("the operator's unsent reply after a refresh is %q, want 稍等", got)
	}
	op.shot("1-console-held-desktop")
	op.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	transcriptShown("the held transcript is shown at phone width")
	op.shot("2-console-held-phone")
	cust.shot("3-customer-held-phone")
	cust.do("switch the customer's page to English", chromedp.Click(chromedp.CSS("#lang")),
		waitFor(`document.documentElement.lang === 'en'`))
	cust.shot("3-customer-held-phone-en")
	cust.do("back to Chinese", chromedp.Click(chromedp.CSS("#lang")), waitFor(`document.documentElement.lang === 'zh-CN'`))

	op.do("hand back",
		chromedp.SetValue(chromedp.CSS(sel+" form.handback input"), "已登记补发"),
		chromedp.Click(chromedp.CSS(sel+" form.handback button")),
		waitFor(conv+` === null`))
	cust.do("the customer sees the operator leave", waitFor(`document.querySelector('.people-note[data-key="left"]') !== null`))
	if got := op.eval(`document.querySelector('#held').innerText`); !strings.Contains(got, "暂无接待中的对话") {
		t.Errorf("after the hand-back the held list reads %q", got)
	}
	op.shot("4-console-handed-back-phone")
	cust.shot("5-customer-handed-back-phone")
}
