package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/support"
)

// The operator lists refund requests and approves or declines them over
// HTTP with the operator token; a decision is final.
func TestOperatorRefunds(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), func(o *envOptions) { o.Token = "s3cret" })
	ctx := support.WithCaller(context.Background(), "token:abc")
	var ids []string
	for _, order := range []string{"A-1024", "A-2048"} {
		r, err := e.svc.RequestRefund(ctx, "token:abc", order, "broken")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RefundID)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url("/operator/refunds"), nil)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refunds without the token: %d, want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Refunds []support.QueuedRefund `json:"refunds"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Refunds) != 2 || list.Refunds[0].Status != support.RefundPending || list.Refunds[0].Caller != "token:abc" {
		t.Fatalf("refund list %+v", list.Refunds)
	}
	resp = e.post(t, "/operator/refunds/"+ids[0]+"/approve", `{"note":"sent back"}`, "Authorization", "Bearer s3cret", "Content-Type", "application/json")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"approved"`) || !strings.Contains(string(body), "sent back") {
		t.Errorf("approve: %d %s", resp.StatusCode, body)
	}
	resp = e.post(t, "/operator/refunds/"+ids[0]+"/decline", "", "Authorization", "Bearer s3cret")
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a second decision: %d, want 409", resp.StatusCode)
	}
	resp = e.post(t, "/operator/refunds/"+ids[1]+"/decline", `{"nope":1}`, "Authorization", "Bearer s3cret", "Content-Type", "application/json")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body with an unknown field: %d, want 400", resp.StatusCode)
	}
	resp = e.post(t, "/operator/refunds/RF-nope/approve", "", "Authorization", "Bearer s3cret")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown request: %d, want 404", resp.StatusCode)
	}
	r, err := e.svc.Refund(ctx, "token:abc", ids[0])
	if err != nil || r.Status != support.RefundApproved {
		t.Errorf("after approval the caller reads %+v, %v", r, err)
	}
}

// The operator page lists the refund requests, newest first, with readable
// times; a pending one has approve and decline forms that post (as the
// browser does, with the operator's Basic credentials) to the refund API,
// which records the decision and sends the browser back to the page.
func TestOperatorPageRefunds(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), func(o *envOptions) { o.Token = "s3cret" })
	ctx := support.WithCaller(context.Background(), "token:abc")
	var ids []string
	for _, order := range []string{"A-1024", "A-2048"} {
		r, err := e.svc.RequestRefund(ctx, "token:abc", order, "broken <script>alert(1)</script>")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RefundID)
	}
	page := func() string {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.url("/operator"), nil)
		req.SetBasicAuth("operator", "s3cret")
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /operator: %d %s", resp.StatusCode, b)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "form-action 'self'") {
			t.Errorf("CSP %q", csp)
		}
		return string(b)
	}
	html := page()
	for _, want := range []string{
		"Refunds · 退款申请 (2)",
		`action="/operator/refunds/` + ids[0] + `/approve"`,
		`action="/operator/refunds/` + ids[1] + `/decline"`,
		"broken &lt;script&gt;alert(1)&lt;/script&gt;",
		`<script src="/static/operator.js" defer></script>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>alert(1)") {
		t.Error("the reason is not escaped")
	}
	if strings.Index(html, "refund-"+ids[1]) > strings.Index(html, "refund-"+ids[0]) {
		t.Error("the newest request is not first")
	}
	// A readable time, and its RFC 3339 form for the browser's zone.
	if !regexp.MustCompile(`<time datetime="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+\-0-9]+</time>`).MatchString(html) {
		t.Errorf("no readable time in the page:\n%s", html)
	}

	// The browser's form post, with a note; the redirect is not followed.
	client := *e.ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	req, _ := http.NewRequest(http.MethodPost, e.url("/operator/refunds/"+ids[0]+"/approve"), strings.NewReader(url.Values{"note": {"sent back"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth("operator", "s3cret")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/operator" {
		t.Fatalf("form approve: %d to %q, want 303 to /operator", resp.StatusCode, resp.Header.Get("Location"))
	}
	q, err := e.svc.Refund(ctx, "token:abc", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if q.Status != support.RefundApproved || q.Note != "sent back" {
		t.Errorf("after the form: %+v", q)
	}
	html = page()
	card := html[strings.Index(html, `id="refund-`+ids[0]):]
	card = card[:strings.Index(card, "</article>")]
	if strings.Contains(card, "<form") || !strings.Contains(card, "✓ approved") || !strings.Contains(card, "sent back") {
		t.Errorf("the decided request's card:\n%s", card)
	}
}
