package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/google/go-cmp/cmp"
)

// httpPeer is a server behind NewHTTPHandler on an httptest server, with
// the direct path on or off (Options.NoDirectCalls).
type httpPeer struct {
	t      *testing.T
	url    string
	srv    *mcpserver.Server
	client *http.Client
}

func newHTTPPeer(t *testing.T, opts *mcpserver.Options, direct bool, hopts *mcpserver.HTTPOptions) *httpPeer {
	t.Helper()
	opts.NoDirectCalls = !direct
	srv := mcpserver.New(opts)
	ts := httptest.NewServer(newHTTPHandler(t, srv, hopts))
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		ts.Close()
		tr.CloseIdleConnections()
	})
	return &httpPeer{t: t, url: ts.URL + mcpserver.HTTPPath, srv: srv, client: &http.Client{Transport: tr, Timeout: connBound}}
}

// httpAnswer is what a POST got back: status, headers but Date, and the
// body with ticket numbers and times normalised.
type httpAnswer struct {
	Status int
	Header http.Header
	Body   string
}

// post sends body with the usual headers of a session (headers add to or,
// with "", remove them) and returns the answer, or the zero answer after
// reporting an error.
func (p *httpPeer) post(ctx context.Context, session, body string, headers map[string]string) httpAnswer {
	p.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		p.t.Errorf("POST %s: %v", body, err)
		return httpAnswer{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	// Errors are reported, not fatal: tests post from goroutines too.
	res, err := p.client.Do(req)
	if err != nil {
		p.t.Errorf("POST %s: %v", body, err)
		return httpAnswer{}
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Errorf("POST %s: reading the answer: %v", body, err)
		return httpAnswer{}
	}
	for _, n := range normalizers {
		raw = n.re.ReplaceAll(raw, []byte(n.with))
	}
	res.Header.Del("Date")
	if id := res.Header.Get("Mcp-Session-Id"); id != "" && id != session {
		res.Header.Set("Mcp-Session-Id", "<new session>")
	}
	return httpAnswer{res.StatusCode, res.Header, string(raw)}
}

// open starts a session and returns its id.
func (p *httpPeer) open() string {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.url, strings.NewReader(initializeBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	id := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || id == "" {
		p.t.Fatalf("initialize: status %d, session %q", res.StatusCode, id)
	}
	if a := p.post(context.Background(), id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); a.Status != http.StatusAccepted {
		p.t.Fatalf("notifications/initialized: %+v", a)
	}
	return id
}

func (p *httpPeer) delete(session string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, p.url, nil)
	req.Header.Set("Mcp-Session-Id", session)
	res, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		p.t.Fatalf("DELETE: status %d", res.StatusCode)
	}
}

// httpCase is one POST: its body and extra headers, and whether the
// direct path takes it.
type httpCase struct {
	name    string
	body    string
	headers map[string]string
	direct  bool
}

// httpDirectCases are the stdio direct path's cases (directCases) and the
// HTTP-only ones: headers the SDK checks, a call whose id is in use.
func httpDirectCases() []httpCase {
	var cases []httpCase
	for _, c := range directCases {
		cases = append(cases, httpCase{name: c.name, body: c.line, direct: c.direct})
	}
	call := `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`
	return append(cases,
		httpCase{"content type with charset", call, map[string]string{"Content-Type": "application/json; charset=utf-8"}, true},
		httpCase{"accept anything", call, map[string]string{"Accept": "*/*"}, true},
		httpCase{"accept in two headers", call, map[string]string{"Accept": "application/json;q=0.9,text/*"}, true},
		httpCase{"other supported protocol version", call, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, false},
		httpCase{"unsupported protocol version", call, map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, false},
		httpCase{"2026 protocol version", call, map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, false},
		httpCase{"no protocol version", call, map[string]string{"Mcp-Protocol-Version": ""}, false},
		httpCase{"accept json only", call, map[string]string{"Accept": "application/json"}, false},
		httpCase{"no accept", call, map[string]string{"Accept": ""}, false},
		httpCase{"text content type", call, map[string]string{"Content-Type": "text/plain"}, false},
		httpCase{"last event id", call, map[string]string{"Last-Event-ID": "x_1"}, false},
		httpCase{"notification", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, nil, false},
		httpCase{"ping", `{"jsonrpc":"2.0","id":22,"method":"ping"}`, nil, false},
		httpCase{"task-augmented", `{"jsonrpc":"2.0","id":23,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"},"task":{"ttl":1000}}}`, nil, false},
		httpCase{"protocol version in meta", `{"jsonrpc":"2.0","id":24,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}}`, nil, false},
		httpCase{"not JSON", `{"jsonrpc":"2.0","id":25,"method":"tools/call"`, nil, false},
		httpCase{"bad jsonrpc version", `{"jsonrpc":"1.0","id":26,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`, nil, false},
		httpCase{"panicking tool", `{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"boom","arguments":{}}}`, nil, true},
	)
}

// TestHTTPDirectMatchesSDK sends every case to a server with the direct
// path and to one without, each on a fresh session, and requires the
// same status, headers (but Date) and body, and the direct path to have
// taken exactly the cases it should.
func TestHTTPDirectMatchesSDK(t *testing.T) {
	var calls atomic.Int32
	for _, tc := range httpDirectCases() {
		t.Run(tc.name, func(t *testing.T) {
			onBothPaths(t, tc.direct, func(direct bool) (httpAnswer, *mcpserver.Server) {
				opts := newDomain(t).options()
				opts.Tools = append(opts.Tools, testTools(&calls)...)
				p := newHTTPPeer(t, opts, direct, nil)
				answer := p.post(context.Background(), p.open(), tc.body, tc.headers)
				return answer, p.srv
			})
		})
	}
}

// TestHTTPDirectFallbackSessions covers requests on sessions the direct
// path does not know: none (a call before initialize), an unknown id, a
// deleted session. Each gets the SDK's answer.
func TestHTTPDirectFallbackSessions(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`
	var got [2][]httpAnswer
	for i, direct := range []bool{false, true} {
		p := newHTTPPeer(t, newDomain(t).options(), direct, nil)
		ctx := context.Background()
		got[i] = append(got[i], p.post(ctx, "", call, nil))
		got[i] = append(got[i], p.post(ctx, "no-such-session", call, nil))
		id := p.open()
		p.delete(id)
		got[i] = append(got[i], p.post(ctx, id, call, nil))
		if n := p.srv.DirectTaken(); n != 0 {
			t.Errorf("direct path (on: %v) answered %d calls, want 0", direct, n)
		}
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
	for j, want := range []int{http.StatusOK, http.StatusNotFound, http.StatusNotFound} {
		if got[1][j].Status != want {
			t.Errorf("answer %d: status %d, want %d: %+v", j, got[1][j].Status, want, got[1][j])
		}
	}
}

// TestHTTPDirectOrdersMatchSDK holds getOrderStatus's answers on both
// paths to each other: cached and uncached orders, unknown ones, every
// argument error, with the PII mask on and off; one at a time on one
// session, then all at once on many sessions.
func TestHTTPDirectOrdersMatchSDK(t *testing.T) {
	const sessions = 12
	for _, mask := range []bool{false, true} {
		t.Run(fmt.Sprintf("mask=%v", mask), func(t *testing.T) {
			var seq, many [2][]httpAnswer
			for i, direct := range []bool{false, true} {
				p := newHTTPPeer(t, orderOptions(t, mask), direct, nil)
				id := p.open()
				for _, line := range orderLines(1) {
					seq[i] = append(seq[i], p.post(context.Background(), id, line, nil))
				}
				ids := make([]string, sessions)
				for k := range ids {
					ids[k] = p.open()
				}
				var mu sync.Mutex
				var wg sync.WaitGroup
				for k, sid := range ids {
					for _, line := range orderLines(100 * (k + 1)) {
						wg.Go(func() {
							a := p.post(context.Background(), sid, line, nil)
							mu.Lock()
							many[i] = append(many[i], a)
							mu.Unlock()
						})
					}
				}
				wg.Wait()
				slices.SortFunc(many[i], func(a, b httpAnswer) int { return strings.Compare(a.Body, b.Body) })
				if want := int64(len(orderArgs) * (sessions + 1)); direct && p.srv.DirectTaken() != want {
					t.Errorf("direct path answered %d calls, want %d", p.srv.DirectTaken(), want)
				}
			}
			for j := range seq[0] {
				if diff := cmp.Diff(seq[0][j], seq[1][j]); diff != "" {
					t.Errorf("%s: the direct path answers differently from the SDK (-sdk +direct):\n%s", orderArgs[j], diff)
				}
			}
			if diff := cmp.Diff(many[0], many[1]); diff != "" {
				t.Errorf("many in flight: the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
			}
		})
	}
}

// TestHTTPDirectDuplicateID sends a plain call whose id is that of a call
// still running on the session, first a plain one (on the direct path),
// then one the SDK serves (its _meta sends it there): both paths refuse
// the second call alike.
func TestHTTPDirectDuplicateID(t *testing.T) {
	const plain = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	for _, running := range []string{plain, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p"}}}`} {
		var got [2]httpAnswer
		for i, direct := range []bool{false, true} {
			started, release := make(chan struct{}, 1), make(chan struct{})
			var sawCancel atomic.Bool
			p := newHTTPPeer(t, &mcpserver.Options{Version: "test", Tools: []*agent.Tool{slowTool(started, release, &sawCancel)}}, direct, nil)
			id := p.open()
			first := make(chan httpAnswer, 1)
			go func() { first <- p.post(context.Background(), id, running, nil) }()
			waitFor(t, started, "the first call to start")
			got[i] = p.post(context.Background(), id, plain, nil)
			close(release)
			if a := <-first; a.Status != http.StatusOK || !strings.Contains(a.Body, `"text":"done"`) {
				t.Errorf("the first call (direct: %v): %+v", direct, a)
			}
		}
		if got[1].Status != http.StatusBadRequest {
			t.Errorf("a duplicate of %s on the direct path: %+v", running, got[1])
		}
		if diff := cmp.Diff(got[0], got[1]); diff != "" {
			t.Errorf("a duplicate of %s: the direct path answers differently from the SDK (-sdk +direct):\n%s", running, diff)
		}
	}
}

// TestHTTPDirectCancel checks that a direct call's context ends when its
// client goes away, and when its session is deleted.
func TestHTTPDirectCancel(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	var sawCancel atomic.Bool
	p := newHTTPPeer(t, &mcpserver.Options{Version: "test", Tools: []*agent.Tool{slowTool(started, release, &sawCancel)}}, true, nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{}}}`

	t.Run("client gone", func(t *testing.T) {
		sawCancel.Store(false)
		id := p.open()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.url, strings.NewReader(call))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			res, err := p.client.Do(req)
			if err == nil {
				res.Body.Close()
			}
			done <- err
		}()
		waitFor(t, started, "the call to start")
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled request got an answer")
		}
		waitUntil(t, sawCancel.Load, "the tool's context to end after its client went away")
	})
	t.Run("session deleted", func(t *testing.T) {
		sawCancel.Store(false)
		id := p.open()
		answer := make(chan httpAnswer, 1)
		go func() { answer <- p.post(context.Background(), id, call, nil) }()
		waitFor(t, started, "the call to start")
		p.delete(id)
		waitUntil(t, sawCancel.Load, "the tool's context to end after its session was deleted")
		if a := <-answer; !strings.Contains(a.Body, "context canceled") {
			t.Errorf("the call of a deleted session: %+v", a)
		}
	})
	if p.srv.DirectTaken() != 2 {
		t.Errorf("direct path answered %d calls, want 2", p.srv.DirectTaken())
	}
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(connBound):
		t.Fatalf("waited %v for %s", connBound, what)
	}
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(connBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", connBound, what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHTTPDirectSessionIdle checks the idle timeout of sessions used only
// through the direct path, on a fake clock: calls spaced within the
// timeout keep a session open however long it lives (the SDK's own timer,
// which never hears of them, used to close it), a call that runs longer
// than the timeout keeps it too, and a session left idle for the timeout
// is closed.
func TestHTTPDirectSessionIdle(t *testing.T) {
	const idle = time.Minute
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		started, release := make(chan struct{}, 1), make(chan struct{})
		var sawCancel atomic.Bool
		srv := mcpserver.New(&mcpserver.Options{Version: "test", Tools: append(testTools(&calls), slowTool(started, release, &sawCancel))})
		h := mcpserver.NewHTTPHandler(srv, &mcpserver.HTTPOptions{SessionIdleTimeout: idle})
		defer h.CloseSessions()
		do := func(session, body string) *httptest.ResponseRecorder {
			req := httptest.NewRequest(http.MethodPost, mcpserver.HTTPPath, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
				req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		id := do("", initializeBody).Header().Get("Mcp-Session-Id")
		if id == "" {
			t.Fatal("initialize gave no session")
		}
		do(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		echo := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"n":1}}}`

		for i := range 10 {
			time.Sleep(idle * 3 / 4)
			if rec := do(id, echo); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"n":1`) {
				t.Fatalf("call %d, %v into a session used every %v: %d %s", i+1, time.Duration(i+1)*idle*3/4, idle*3/4, rec.Code, rec.Body)
			}
		}
		// A call that runs for three times the timeout.
		answered := make(chan *httptest.ResponseRecorder)
		go func() {
			answered <- do(id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
		}()
		<-started
		time.Sleep(3 * idle)
		close(release)
		if rec := <-answered; rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"text":"done"`) {
			t.Fatalf("a call that ran for %v: %d %s", 3*idle, rec.Code, rec.Body)
		}
		time.Sleep(idle * 3 / 4)
		if rec := do(id, echo); rec.Code != http.StatusOK {
			t.Fatalf("a call %v after a long one: %d %s", idle*3/4, rec.Code, rec.Body)
		}
		if n := srv.DirectTaken(); n != 12 {
			t.Errorf("direct path answered %d calls, want 12", n)
		}
		// Now left idle.
		time.Sleep(idle + time.Second)
		synctest.Wait()
		if rec := do(id, echo); rec.Code != http.StatusNotFound {
			t.Fatalf("a call after %v idle with a timeout of %v: %d %s, want 404", idle+time.Second, idle, rec.Code, rec.Body)
		}
	})
}

// TestHTTPDirectCaller checks that a tool on the direct path sees the
// caller the SDK's path names (CallerFrom): the bearer token, so that a
// refund requested in one session is found from another session with the
// same token and not with another token.
func TestHTTPDirectCaller(t *testing.T) {
	var got [2][]httpAnswer
	for i, direct := range []bool{false, true} {
		p := newHTTPPeer(t, newDomain(t).options(), direct, &mcpserver.HTTPOptions{Token: "tok-a,tok-b"})
		base := p.client.Transport
		p.client.Transport = tokenTransport{"tok-a", base}
		s1, s2 := p.open(), p.open()
		ctx := context.Background()
		asked := p.post(ctx, s1, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"requestRefund","arguments":{"orderId":"A-1024","reason":"broken"}}}`, nil)
		var res struct {
			Result struct {
				StructuredContent struct {
					RefundID string `json:"refundId"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(asked.Body), &res); err != nil || res.Result.StructuredContent.RefundID == "" {
			t.Fatalf("requestRefund (direct: %v): %v %+v", direct, err, asked)
		}
		status := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getRefundStatus","arguments":{"refundId":"` + res.Result.StructuredContent.RefundID + `"}}}`
		same := p.post(ctx, s2, status, nil)
		p.client.Transport = tokenTransport{"tok-b", base}
		other := p.post(ctx, p.open(), status, nil)
		got[i] = []httpAnswer{same, other}
		for j := range got[i] {
			got[i][j].Body = strings.ReplaceAll(got[i][j].Body, res.Result.StructuredContent.RefundID, "RF-<id>")
		}
		if want := int64(3); direct && p.srv.DirectTaken() != want {
			t.Errorf("direct path answered %d calls, want %d", p.srv.DirectTaken(), want)
		}
	}
	if strings.Contains(got[1][0].Body, `"isError":true`) || !strings.Contains(got[1][1].Body, `"isError":true`) {
		t.Errorf("the refund's status with the same token, then another: %+v", got[1])
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
}

// tokenTransport adds a bearer token to every request sent through base.
type tokenTransport struct {
	token string
	base  http.RoundTripper
}

func (b tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// TestHTTPDirectCancelledNotification checks that notifications/cancelled
// ends a call on the direct path as it ends one on the SDK's: the tool's
// context ends, the notification is accepted, and the call's answer is
// the same.
func TestHTTPDirectCancelledNotification(t *testing.T) {
	var got [2][]httpAnswer
	for i, direct := range []bool{false, true} {
		started, release := make(chan struct{}, 1), make(chan struct{})
		var sawCancel atomic.Bool
		p := newHTTPPeer(t, &mcpserver.Options{Version: "test", Tools: []*agent.Tool{slowTool(started, release, &sawCancel)}}, direct, nil)
		id := p.open()
		answer := make(chan httpAnswer, 1)
		go func() {
			answer <- p.post(context.Background(), id, `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"slow","arguments":{}}}`, nil)
		}()
		waitFor(t, started, "the call to start")
		note := p.post(context.Background(), id, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1","reason":"user"}}`, nil)
		var a httpAnswer
		select {
		case a = <-answer:
		case <-time.After(connBound):
			close(release)
			t.Fatalf("direct %v: the cancelled call was not answered within %v", direct, connBound)
		}
		close(release)
		if !sawCancel.Load() {
			t.Errorf("direct %v: the tool's context did not end", direct)
		}
		got[i] = []httpAnswer{note, a}
		if direct && p.srv.DirectTaken() != 1 {
			t.Errorf("direct path answered %d calls, want 1", p.srv.DirectTaken())
		}
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the direct path answers differently from the SDK (-sdk +direct):\n%s", diff)
	}
}
