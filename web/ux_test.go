package web

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/model/scripted"
)

// TestWrongMethodIs405: every route answers another method with 405 and
// an Allow header naming the methods it takes (GET on a POST-only path,
// POST on a GET-only one), in JSON like the rest of the API; a path that
// no route takes stays 404.
func TestWrongMethodIs405(t *testing.T) {
	e := newEnv(t, scripted.New(), nil)
	for _, c := range []struct{ method, path, allow string }{
		{"GET", "/api/sessions", "POST"},
		{"DELETE", "/api/sessions", "POST"},
		{"POST", "/api/sessions/current", "GET, HEAD"},
		{"POST", "/api/sessions/w-1", "GET, HEAD"},
		{"GET", "/api/sessions/w-1/messages", "POST"},
		{"GET", "/api/sessions/w-1/approvals/a-1", "POST"},
		{"GET", "/v1/chat/completions", "POST"},
		{"POST", "/v1/models", "GET, HEAD"},
		{"POST", "/operator", "GET, HEAD"},
		{"POST", "/operator/queue", "GET, HEAD"},
		{"GET", "/operator/handoffs/H-1/resolve", "POST"},
		{"GET", "/operator/tickets/TK-1/resolve", "POST"},
		{"POST", "/operator/refunds", "GET, HEAD"},
		{"GET", "/operator/refunds/R-1/approve", "POST"},
		{"GET", "/operator/refunds/R-1/decline", "POST"},
		{"POST", "/healthz", "GET, HEAD"},
		{"POST", "/readyz", "GET, HEAD"},
		{"POST", "/metrics", "GET, HEAD"},
		{"POST", "/static/app.js", "GET, HEAD"},
		{"POST", "/", "GET, HEAD"},
	} {
		req, _ := http.NewRequest(c.method, e.url(c.path), strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body ErrorBody
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != c.allow || !strings.Contains(body.Error, c.method+" is not allowed") {
			t.Errorf("%s %s: %d, Allow %q, error %q; want 405, Allow %q and an error naming the method", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), body.Error, c.allow)
		}
	}
	for _, m := range []string{"GET", "POST"} {
		req, _ := http.NewRequest(m, e.url("/nope"), nil)
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || resp.Header.Get("Allow") != "" {
			t.Errorf("%s /nope: %d (Allow %q), want 404", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// TestUnknownFieldNamed: a body with a field the API does not know is
// refused with that field's name and the accepted ones, not read as an
// empty message.
func TestUnknownFieldNamed(t *testing.T) {
	e := newEnv(t, scripted.New(), nil)
	id := e.newSession(t)
	for _, c := range []struct{ path, body, want string }{
		{"/api/sessions/" + id + "/messages", `{"text":"hi"}`, `unknown field "text" in the body; the accepted fields are "content"`},
		{"/api/sessions/" + id + "/approvals/a-1", `{"approve":true}`, `unknown field "approve" in the body; the accepted fields are "approved", "remember"`},
	} {
		resp := e.post(t, c.path, c.body)
		var body ErrorBody
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || body.Error != c.want {
			t.Errorf("POST %s %s: %d %q, want 400 %q", c.path, c.body, resp.StatusCode, body.Error, c.want)
		}
	}
	// The OpenAI endpoint keeps taking the fields its clients send.
	resp := e.post(t, "/v1/chat/completions", `{"model":"agentapp","temperature":0.2,"messages":[{"role":"user","content":"hi"}]}`)
	resp.Body.Close()
	if resp.StatusCode == http.StatusBadRequest {
		t.Errorf("the OpenAI endpoint refused a field it does not use: %d", resp.StatusCode)
	}
}

// TestCurrentSessionWithoutOneIsNoContent: the page's first visit asks for
// the current session; having none is not an error (no 404 logged in the
// browser), and a cookie of a session that is gone is dropped.
func TestCurrentSessionWithoutOneIsNoContent(t *testing.T) {
	e := newEnv(t, scripted.New(), nil)
	resp, err := e.ts.Client().Get(e.url("/api/sessions/current"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("first visit: %d, want 204", resp.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url("/api/sessions/current"), nil)
	req.AddCookie(&http.Cookie{Name: SessionCookie, Value: "w-gone"})
	resp, err = e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cleared := false
	for _, c := range resp.Cookies() {
		cleared = cleared || (c.Name == SessionCookie && c.MaxAge < 0)
	}
	if resp.StatusCode != http.StatusNoContent || !cleared {
		t.Errorf("a stale cookie: %d (cleared %v), want 204 and the cookie dropped", resp.StatusCode, cleared)
	}
}

// TestOperatorTimesReadable: the operator view shows times to the minute
// in <time> elements (the browser's script shows them in its zone), not
// the stored RFC 3339 stamps with their fractions of a second.
func TestOperatorTimesReadable(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	id := e.newSession(t)
	e.send(t, id, "我要转人工").rest(t)
	resp, err := e.ts.Client().Get(e.url("/operator"))
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") || !strings.Contains(string(page), `<script src="/static/operator.js"`) {
		t.Errorf("the operator page does not load its script (CSP %q)", resp.Header.Get("Content-Security-Policy"))
	}
	stamp := regexp.MustCompile(`<small><time datetime="(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)" title="\d{4}-[^"]+">(\d{4}-\d\d-\d\d \d\d:\d\d) UTC</time></small>`).FindStringSubmatch(string(page))
	if stamp == nil || !strings.HasPrefix(strings.Replace(stamp[1], "T", " ", 1), stamp[2]) {
		t.Errorf("no readable <time> in the operator page:\n%s", page)
	}
	js, err := e.ts.Client().Get(e.url("/static/operator.js"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(js.Body)
	js.Body.Close()
	if js.StatusCode != http.StatusOK || !strings.Contains(string(body), "time[datetime]") {
		t.Errorf("/static/operator.js: %d", js.StatusCode)
	}
}
