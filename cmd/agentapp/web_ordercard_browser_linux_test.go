package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserOrderCard drives agentapp serve's own MCP Apps view, the
// order card, in agentapp web: it renders with getOrderStatus's result in
// the page's language, and its button opens an after-sales ticket through
// the page's approval (AGENT_GUARD_CONFIRM): Deny is shown as no ticket,
// Allow as the ticket's id.
func TestBrowserOrderCard(t *testing.T) {
	base := startWeb(t, "AGENT_GUARD_CONFIRM=createTicket")
	b := openBrowser(t, browserOptions{Lang: "zh-CN", Frames: true})
	ctx, do, eval, shot := b.ctx, b.do, b.eval, b.shot
	card := func() *chromedp.Node {
		t.Helper()
		outer, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`.view[data-tool="getOrderStatus"] iframe`)))
		if err != nil || len(outer) == 0 {
			t.Fatalf("no view of getOrderStatus: %v", err)
		}
		inner, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[len(outer)-1])))
		if err != nil || len(inner) == 0 {
			t.Fatalf("no inner frame in the order card: %v", err)
		}
		return inner[0]
	}
	// cardText polls the card's element until ok accepts its text.
	cardText := func(sel, what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for range 150 {
			tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			s, _ = chromedp.Run(tctx, chromedp.TextContent(chromedp.CSS(sel), chromedp.FromNode(card())))
			cancel()
			if s = strings.TrimSpace(s); ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the order card: %s: %s is %q", what, sel, s)
		return s
	}
	pending := `.approval:not([data-decision])`

	do("open the page", chromedp.EmulateViewport(900, 1200), chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")))
	if eval(`document.documentElement.lang`) != "zh-CN" {
		do("switch to Chinese", chromedp.Click(chromedp.CSS("#lang")))
	}
	do("ask about an order",
		chromedp.SetValue(chromedp.CSS("#input"), "订单 A-1024 到哪了？"), chromedp.Click(chromedp.CSS("#send")),
		chromedp.Poll[chromedp.Void](`!!document.querySelector('.view[data-tool="getOrderStatus"][data-state="ready"]')`, chromedp.WithPollingTimeout(60*time.Second)))
	cardText("#status", "no order status", func(s string) bool { return s == "已发货" })
	if got := cardText("#steps", "no stages", func(s string) bool { return s != "" }); !strings.Contains(got, "仓库打包中") {
		t.Errorf("stages %q", got)
	}
	cardText("#ticket", "no ticket button", func(s string) bool { return s == "申请售后" })
	shot("1-order-card")

	do("press the card's button", chromedp.Click(chromedp.CSS("#ticket"), chromedp.FromNode(card())),
		chromedp.WaitVisible(chromedp.CSS(pending+" button.deny")))
	// The server in parentheses, the view's note after them (it read
	// "(shop（视图请求）)"); the choices of the terminal's question, but
	// for the project (AGENT_GUARD_CONFIRM asks whatever the allow list
	// says).
	if q := eval(`document.querySelector('` + pending + ` .question').innerText`); !strings.Contains(q, "createTicket (shop)（视图请求）") {
		t.Errorf("the card's approval reads %q; want the tool, its server and the view's note", q)
	}
	if b := eval(`[...document.querySelectorAll('` + pending + ` button')].map(b => b.innerText).join("|")`); b != "允许一次|本次对话中都允许|拒绝" {
		t.Errorf("the approval's buttons are %q", b)
	}
	shot("2-card-approval")
	do("deny", chromedp.Click(chromedp.CSS(pending+" button.deny")))
	cardText("#note", "Deny did not reach the card", func(s string) bool { return strings.HasPrefix(s, "未能创建工单") })

	do("press again", chromedp.Click(chromedp.CSS("#ticket"), chromedp.FromNode(card())),
		chromedp.WaitVisible(chromedp.CSS(pending+" button.allow")))
	do("allow", chromedp.Click(chromedp.CSS(pending+" button.allow")))
	note := cardText("#note", "no ticket after Allow", func(s string) bool { return strings.Contains(s, "TK-") })
	if !strings.HasPrefix(note, "售后工单已创建：TK-") {
		t.Errorf("after Allow the card says %q", note)
	}
	shot("3-card-ticket")
	fmt.Fprintln(os.Stderr, "order card:", note)
}
