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
// has seen the view show the first partial input.
func TestBrowserAppsPartialInput(t *testing.T) {
	chromium := chromiumPath(t)
	gate := make(chan struct{})
	var gateOnce sync.Once
	open := func() { gateOnce.Do(func() { close(gate) }) }
	defer open()
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
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
		if strings.Contains(string(body), `"role":"tool"`) { // the call's result is in: answer
			send(`{"role":"assistant","content":"shown"}`, "stop")
			io.WriteString(w, "data: [DONE]\n\n")
			return
		}
		args := func(s string) string {
			b, _ := json.Marshal(s)
			return `{"tool_calls":[{"index":0,"function":{"arguments":` + string(b) + `}}]}`
		}
		send(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_p1","type":"function","function":{"name":"input_probe","arguments":""}}]}`, "")
		send(args(`{"city":"Pa`), "")
		select { // the rest once the view has shown the first piece
		case <-gate:
		case <-r.Context().Done():
			return
		case <-time.After(90 * time.Second):
		}
		send(args(`ris","days":[1,`), "")
		send(args(`2]}`), "")
		send(`{}`, "tool_calls")
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	defer fake.Close()
	base := startWebWith(t, []string{"--model", "fake", "--mcp", "probe=" + appViewServer.Path(t), "--allow", "probe:*"},
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+fake.URL+"/v1", "OPENAI_MODEL=fake")

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
		chromedp.Flag("lang", "en-US"),
		// As in TestBrowserApps: the frames stay in the page's process so
		// that the test can read inside them.
		chromedp.Flag("disable-features", "SitePerProcess,IsolateOrigins,IsolateSandboxedIframes"),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.UserDataDir(profileDir(t)),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// viewLog is what the view wrote, "" while it has no view or frame.
	viewLog := func() string {
		t.Helper()
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		outer, err := chromedp.Run(tctx, chromedp.Nodes(chromedp.CSS(`.view[data-tool="input_probe"] iframe`), chromedp.AtLeast(0)))
		if err != nil || len(outer) == 0 {
			return ""
		}
		inner, err := chromedp.Run(tctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[0]), chromedp.AtLeast(0)))
		if err != nil || len(inner) == 0 {
			return ""
		}
		s, err := chromedp.Run(tctx, chromedp.TextContent(chromedp.CSS("#log"), chromedp.FromNode(inner[0])))
		if err != nil {
			return ""
		}
		return s
	}
	waitLog := func(what string, ok func(string) bool) string {
		t.Helper()
		var s string
		for range 300 {
			if s = viewLog(); ok(s) {
				return s
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("the view of input_probe: %s; its log:\n%s", what, s)
		return s
	}

	do("open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(".welcome")),
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#input"), "show the input probe"),
		chromedp.Click(chromedp.CSS("#send")))
	waitLog("no tool-input-partial while the model was still writing the call", func(s string) bool {
		return strings.Contains(s, "tool-input-partial ")
	})
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.querySelectorAll('.step[data-tool="input_probe"]').length`)); err != nil || n != 0 {
		t.Errorf("the call's step is shown (%v, %v) before the model finished writing it", n, err)
	}
	open()
	log := waitLog("no tool-input after the call started", func(s string) bool { return strings.Contains(s, "tool-input {") })
	do("wait for the answer", chromedp.Poll[chromedp.Void](`document.querySelector('.msg.assistant[data-done="1"]') !== null`, chromedp.WithPollingTimeout(60*time.Second)))
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
}
