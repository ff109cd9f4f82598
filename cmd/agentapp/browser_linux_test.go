package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserPage is one headless Chromium tab for a browser test, with the
// test's way to act on it: each step fails the test with what it was
// doing, and screenshots go to artifactsDir.
type browserPage struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

// browserOptions are what a browser test may choose.
type browserOptions struct {
	// Lang is the browser's language (its Accept-Language and
	// navigator.language), e.g. "zh-CN".
	Lang string
	// Frames keeps cross-origin frames (MCP Apps views) in the page's
	// process, so the test can read inside them; the browser's origin
	// checks hold the same.
	Frames bool
	// Timeout bounds the whole browser's life; 0 means 3 minutes.
	Timeout time.Duration
}

// openBrowser starts Chromium (the test is skipped where there is none,
// outside CI) and returns its page; everything is stopped at cleanup.
func openBrowser(t *testing.T, o browserOptions) *browserPage {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("lang", o.Lang), chromedp.UserDataDir(profileDir(t)),
	}
	if o.Frames {
		opts = append(opts, chromedp.Flag("disable-features", "SitePerProcess,IsolateOrigins,IsolateSandboxedIframes"),
			chromedp.Flag("disable-site-isolation-trials", true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, cmpOr(o.Timeout, 3*time.Minute))
	t.Cleanup(func() { cancel(); cancelCtx(); cancelAlloc() })
	return &browserPage{t: t, ctx: ctx, shots: artifactsDir(t)}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// do runs steps, failing the test with what it was doing.
func (b *browserPage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval returns the string a JavaScript expression evaluates to.
func (b *browserPage) eval(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// shot saves a screenshot of the whole page as name.png and logs where.
func (b *browserPage) shot(name string) {
	b.t.Helper()
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // 100 means PNG
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", p)
}
