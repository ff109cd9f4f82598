package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserAppsPartialInput: while the model is still writing a call to
// a tool with a view, the page opens the view and passes it the input so
// far (ui/notifications/tool-input-partial, valid JSON), then the whole
// input once the call starts (ui/notifications/tool-input), in that order
// and in the same view. The model is a fake OpenAI-compatible server that
// streams the call's arguments in pieces and stops halfway until the test
// has seen the view show the first partial input. Hostile turns: the model
// writes a call again under the id of a call that has ended, and the view
// hears nothing more; a turn that fails while the model writes a call
// tells that call's early view it was cancelled, with no tool-input.
func TestBrowserAppsPartialInput(t *testing.T) {
	chromiumPath(t) // skips at once where there is no Chromium, before any server starts
	gates := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var gateOnce [2]sync.Once
	open := func(i int) { gateOnce[i].Do(func() { close(gates[i]) }) }
	defer open(0)
	defer open(1)
	var mu sync.Mutex
	requests := 0
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		requests++
		n := requests
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fl, _ := w.(http.Flusher)
		send := func(delta, finish string) {
			fr := "null"
			if finish != "" {
				fr = `"` + finish + `"`
			}
			fmt.Fprintf(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, fr)
			fl.Flush()
		}
		args := func(s string) string {
			b, _ := json.Marshal(s)
			return `{"tool_calls":[{"index":0,"function":{"arguments":` + string(b) + `}}]}`
		}
		start := func(id string) {
			send(`{"role":"assistant","tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"input_probe","arguments":""}}]}`, "")
		}
		wait := func(gate chan struct{}) bool {
			select {
			case <-gate:
				return true
			case <-r.Context().Done():
				return false
			case <-time.After(90 * time.Second):
				return true
			}
		}
		switch n {
		case 1: // the call, stopping halfway until the view has shown the first piece
			start("call_p1")
			send(args(`{"city":"Pa`), "")
			if !wait(gates[0]) {
				return
			}
			send(args(`ris","days":[1,`), "")
			send(args(`2]}`), "")
			send(`{}`, "tool_calls")
		case 2: // the same call id again, once that call has ended
			start("call_p1")
			send(args(`{"city":"Ly`), "")
			time.Sleep(200 * time.Millisecond)
			send(args(`on"}`), "")
			send(`{}`, "tool_calls")
		case 3:
			send(`{"role":"assistant","content":"shown"}`, "stop")
		default: // a call the turn never finishes: the stream breaks
			start("call_p2")
			send(args(`{"city":"Ro`), "")
			if !wait(gates[1]) {
				return
			}
			io.WriteString(w, `data: {"error":{"message":"the fake provider broke off","type":"server_error"}}`+"\n\n")
			return
		}
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer fake.Close()
	base := startWebWith(t, []string{"--model", "fake", "--mcp", "probe=" + appViewServer.Path(t), "--allow", "probe:*"},
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+fake.URL+"/v1", "OPENAI_MODEL=fake")

	// The views' frames stay in the page's process, so that the test can
	// read inside them.
	page := openBrowser(t, browserOptions{Lang: "en-US", Frames: true, Timeout: 3 * time.Minute})
	ctx := page.ctx

	do := page.do
	// viewLog is what the view of input_probe in answer i wrote, "" while
	// it has no view or frame.
	viewLog := func(i int) string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		// The log holds the welcome, then a question and its answer each.
		sel := fmt.Sprintf(`#log > .msg:nth-child(%d) .view[data-tool="input_probe"] iframe`, 3+2*i)
		outer, err := chromedp.Run(tctx, chromedp.Nodes(chromedp.CSS(sel)))
		if err != nil || len(outer) == 0 {
			return ""
		}
		inner, err := chromedp.Run(tctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[0])))
		if err != nil || len(inner) == 0 {
			return ""
		}
		s, err := chromedp.Run(tctx, chromedp.TextContent(chromedp.CSS("#log"), chromedp.FromNode(inner[0])))
		if err != nil {
			return ""
		}
		return s
	}
	waitLog := func(i int, what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for range 300 {
			if s = viewLog(i); ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.view')].map((v) => v.dataset.tool + " " + v.dataset.state + " " + v.textContent).join("; ") + " | " + [...document.querySelectorAll('.msg')].map((m) => m.innerText).join(" / ")`))
		t.Fatalf("the view of input_probe: %s; its log:\n%s\nthe page: %s", what, s, page)
		return s
	}

	do("open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")),
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#input"), "show the input probe"),
		chromedp.Click(chromedp.CSS("#send")))
	waitLog(0, "no tool-input-partial while the model was still writing the call", func(s string) bool {
		return strings.Contains(s, "tool-input-partial ")
	})
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelectorAll('.step[data-tool="input_probe"]').length`)); err != nil || n != 0 {
		t.Errorf("the call's step is shown (%v, %v) before the model finished writing it", n, err)
	}
	open(0)
	log := waitLog(0, "no tool-input after the call started", func(s string) bool { return strings.Contains(s, "tool-input {") })
	do("wait for the answer", chromedp.Poll[chromedp.Void](`document.querySelector('.msg.assistant[data-done="1"]') !== null`, chromedp.WithPollingTimeout(60*time.Second)))
	log = viewLog(0) // the model's second call under the same id is in now
	t.Logf("the view's log:\n%s", log)

	var partials []map[string]any
	var whole map[string]any
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		kind, args, _ := strings.Cut(line, " ")
		var v map[string]any
		if err := json.Unmarshal([]byte(args), &v); err != nil {
			t.Errorf("%s with arguments %s: not a JSON object: %v", kind, args, err)
		}
		switch {
		case kind == "tool-input-partial" && whole == nil:
			partials = append(partials, v)
		case kind == "tool-input" && whole == nil:
			whole = v
		default:
			t.Errorf("%s after the whole input", kind)
		}
	}
	if len(partials) == 0 || whole == nil {
		t.Fatalf("%d partial inputs, whole input %v; want partial ones, then the whole", len(partials), whole)
	}
	if got, _ := json.Marshal(partials[0]); string(got) != `{"city":"Pa"}` {
		t.Errorf("the first partial input is %s, want the first piece repaired", got)
	}
	if got, _ := json.Marshal(whole); string(got) != `{"city":"Paris","days":[1,2]}` {
		t.Errorf("the whole input is %s", got)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelectorAll('.view[data-tool="input_probe"]').length`)); err != nil || n != 1 {
		t.Errorf("%v views of input_probe (%v); want the one the partial input opened", n, err)
	}

	// A turn that breaks off while the model writes a call: the view it
	// opened early is told the call was cancelled, and gets no input.
	do("ask again", chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#input"), "once more"),
		chromedp.Click(chromedp.CSS("#send")))
	waitLog(1, "no tool-input-partial in the second view", func(s string) bool { return strings.Contains(s, "tool-input-partial ") })
	open(1)
	log = waitLog(1, "the view of the call the failed turn never finished was not told", func(s string) bool { return strings.Contains(s, "tool-cancelled") })
	if want := "tool-input-partial {\"city\":\"Ro\"}\ntool-cancelled"; strings.TrimSpace(log) != want {
		t.Errorf("the second view's log:\n%s\nwant:\n%s", log, want)
	}
}
