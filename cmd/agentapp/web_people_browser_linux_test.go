package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The customer's page with a person in the conversation (issue 41): "转人工"
// shows the wait, an operator's takeover and messages (sent over the
// operator API) appear as a person in Chinese and English, a message while
// held is marked sent to them, the hand-back brings the assistant back,
// and a reload keeps the operator's message. Screenshots at phone and
// desktop width.
func TestBrowserPersonJoins(t *testing.T) {
	base := startWebWith(t, nil)
	b := openBrowser(t, browserOptions{Lang: "zh-CN"})
	ask := func(text string) chromedp.Action[chromedp.Void] {
		return chromedp.Steps(
			chromedp.WaitEnabled(chromedp.CSS("#send")),
			chromedp.SetValue(chromedp.CSS("#input"), text),
			chromedp.Click(chromedp.CSS("#send")),
		)
	}
	waitFor := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(30*time.Second))
	}
	operator := func(action, body string) {
		t.Helper()
		id := b.eval(`sessionId`)
		resp, err := http.Post(base+"/operator/sessions/"+id+"/"+action, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("operator %s: %s", action, resp.Status)
		}
	}

	b.do("open the page on a phone-sized screen",
		chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if b.eval(`document.documentElement.lang`) != "zh-CN" {
		b.do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}
	b.do("ask for a person", ask("转人工"), waitFor(`document.querySelector('.people-note[data-key="waiting"]') !== null`))
	operator("takeover", `{"name":"小王"}`)
	b.do("the operator joins", waitFor(`[...document.querySelectorAll('.people-note')].some(n => n.innerText.includes('小王'))`))
	operator("messages", `{"content":"您好，我是小王，马上为您查看。","name":"小王"}`)
	b.do("the operator writes", waitFor(`document.querySelector('.msg.operator') !== null`))
	if got := b.eval(`document.querySelector('.msg.operator').innerText`); !strings.Contains(got, "人工客服 · 小王") || !strings.Contains(got, "马上为您查看") {
		t.Errorf("the operator's message reads %q", got)
	}
	b.do("write while held", ask("好的，谢谢"), waitFor(`document.querySelector('.msg.queued[data-done]') !== null`))
	if got := b.eval(`document.querySelector('.msg.queued').innerText`); !strings.Contains(got, "已发送给人工客服 小王") {
		t.Errorf("the held message's box reads %q", got)
	}
	b.shot("0-phone-zh-held")
	b.do("switch to English", chromedp.Click(chromedp.CSS("#lang")))
	if got := b.eval(`document.querySelector('.msg.operator .who').innerText`); got != "Agent · 小王" {
		t.Errorf("in English the operator is labelled %q", got)
	}
	b.shot("1-phone-en-held")
	b.do("desktop width", chromedp.EmulateViewport(1280, 800))
	b.shot("2-desktop-en-held")

	operator("handback", `{"note":"客户的包裹已补发","name":"小王"}`)
	b.do("the operator leaves", waitFor(`document.querySelector('.people-note[data-key="left"]') !== null`))
	answers := b.eval(`String(document.querySelectorAll('.msg.assistant[data-done]').length)`)
	b.do("the assistant answers again", ask("订单 A-1024 到哪了？"),
		waitFor(`String(document.querySelectorAll('.msg.assistant[data-done]').length) !== "`+answers+`"`))
	if got := b.eval(`[...document.querySelectorAll('.msg.assistant[data-done]')].pop().innerText`); !strings.Contains(got, "A-1024") {
		b.shot("failed-answer")
		t.Errorf("after the hand-back the answer reads %q", got)
	}
	if b.eval(`String(document.querySelectorAll('.msg.queued').length)`) != "1" {
		t.Error("after the hand-back a message was still queued for the operator")
	}
	b.shot("3-desktop-en-handed-back")
	b.do("reload", chromedp.Reload(), waitFor(`document.querySelector('.msg.operator') !== null`))
	if b.eval(`String(document.querySelectorAll('.msg.operator').length)`) != "1" {
		t.Error("the reloaded page does not show the operator's message once")
	}
	b.shot("4-desktop-en-reloaded")
}
