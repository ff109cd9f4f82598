package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/assistant/compose"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/host/hosttest"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testEnv is a Server behind a real HTTP server.
type testEnv struct {
	srv *Server
	ts  *httptest.Server
	st  *store.Store
	svc *support.Service // the operator view's queue
}

// envOptions are the options of a test server and of the host under it.
type envOptions struct {
	Options
	Model model.Model
	// LocalTools are the assistant's unless a test clears them; Local
	// are offered after them.
	LocalTools  func(ctx context.Context, st *store.Store, g *guard.Guards, logger *slog.Logger) ([]*agent.Tool, error)
	Local       []*agent.Tool
	Servers     []host.Server
	Guards      *guard.Config
	System      string
	MaxSteps    int
	TurnTimeout time.Duration
	Context     host.ContextOptions
	Spend       host.Spend
	// Store is the database; nil opens a fresh one. The host takes it
	// over, as in production.
	Store *store.Store
}

// openHost opens the host under a test server as cmd/agentapp does: with
// host.Open and what the assistant brings (compose.Host), through
// hosttest.
func openHost(t testing.TB, o *envOptions) *host.Host {
	t.Helper()
	ho := compose.Host(&host.Options{})
	ho.Model, ho.Store, ho.Servers, ho.Guards = o.Model, o.Store, o.Servers, o.Guards
	ho.LocalTools, ho.Local = o.LocalTools, o.Local
	ho.MaxSteps, ho.TurnTimeout, ho.Context = o.MaxSteps, o.TurnTimeout, o.Context
	ho.Spend = o.Spend
	if o.System != "" {
		ho.System = o.System
	}
	if o.Clock != nil {
		ho.Now = o.Clock.Now
	}
	return hosttest.MustOpen(t, ho)
}

// newEnv starts a Server over a host with the real local tools (plus
// extra) on a fresh database; edit adjusts the options first.
func newEnv(t testing.TB, m model.Model, edit func(*envOptions)) *testEnv {
	t.Helper()
	o := &envOptions{Model: m, LocalTools: assistant.LocalTools}
	o.AddressRate, o.SessionRate = Unlimited, Unlimited
	if edit != nil {
		edit(o)
	}
	return startEnv(t, o)
}

// startEnv starts a Server with o, the operator view mounted as
// cmd/agentapp mounts it.
func startEnv(t testing.TB, o *envOptions) *testEnv {
	t.Helper()
	h := openHost(t, o)
	st := h.Store()
	svc, err := support.New(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	opts := o.Options
	opts.Host = h
	if opts.Operator == nil {
		opts.Operator = assistant.Operator(svc, nil)
	}
	srv, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv.NewHTTPServer()
	ts.Start()
	t.Cleanup(func() {
		ts.Close()
		srv.Close()
	})
	return &testEnv{srv: srv, ts: ts, st: st, svc: svc}
}

// reopen opens the database of st again, as a restarted process would.
func reopen(t testing.TB, st *store.Store) *store.Store {
	t.Helper()
	st2, err := store.OpenFile(st.Path)
	if err != nil {
		t.Fatal(err)
	}
	return st2
}

func (e *testEnv) url(path string) string { return e.ts.URL + path }

// post sends a JSON body and returns the response.
func (e *testEnv) post(t testing.TB, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url(path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (e *testEnv) newSession(t testing.TB) string {
	t.Helper()
	resp := e.post(t, "/api/sessions", "")
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/sessions: %s", resp.Status)
	}
	var info SessionInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.ID
}

func (e *testEnv) history(t *testing.T, id string) []HistoryEntry {
	t.Helper()
	resp, err := e.ts.Client().Get(e.url("/api/sessions/" + id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET session: %s", resp.Status)
	}
	var info SessionInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	return info.Messages
}

type sseEvent struct {
	Name string
	Data json.RawMessage
}

func (ev sseEvent) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(ev.Data, v); err != nil {
		t.Fatalf("event %s data %s: %v", ev.Name, ev.Data, err)
	}
}

// sseStream reads the events of a response as they come.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
}

func readStream(t *testing.T, resp *http.Response) *sseStream {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body.Close()
		t.Fatalf("want an event stream, got %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 64)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
			case line == "":
				s.events <- ev
				ev = sseEvent{}
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event; ok is false at the end of the stream.
func (s *sseStream) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return sseEvent{}, false
	}
}

// until reads events until one named name, returning all read.
func (s *sseStream) until(t *testing.T, name string) []sseEvent {
	t.Helper()
	var got []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			t.Fatalf("stream ended before a %s event; got %v", name, names(got))
		}
		got = append(got, ev)
		if ev.Name == name {
			return got
		}
	}
}

// rest reads the stream to its end.
func (s *sseStream) rest(t *testing.T) []sseEvent {
	t.Helper()
	var got []sseEvent
	for {
		ev, ok := s.next(t)
		if !ok {
			return got
		}
		got = append(got, ev)
	}
}

func names(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Name
	}
	return out
}

func (e *testEnv) send(t *testing.T, session, text string) *sseStream {
	t.Helper()
	b, _ := json.Marshal(MessageRequest{Content: text})
	return readStream(t, e.post(t, "/api/sessions/"+session+"/messages", string(b)))
}

// fakeClock fires its timers only when told to.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.waiters = append(c.waiters, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

// Advance moves the clock and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if !w.at.After(c.now) {
			w.ch <- c.now
			continue
		}
		kept = append(kept, w)
	}
	c.waiters = kept
}

// shopServer is an MCP server in this process with one tool, refund,
// that counts its calls.
type shopServer struct {
	mu    sync.Mutex
	calls []string
}

func (s *shopServer) called() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// connectShop connects the shop over an in-memory MCP transport.
func connectShop(t *testing.T) (*shopServer, *mcpclient.Bridge) {
	t.Helper()
	shop := &shopServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	type in struct {
		OrderID string `json:"orderId"`
	}
	type out struct {
		Refunded string `json:"refunded"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "refund", Description: "Refund an order."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, out, error) {
		shop.mu.Lock()
		shop.calls = append(shop.calls, a.OrderID)
		shop.mu.Unlock()
		return nil, out{Refunded: a.OrderID}, nil
	})
	b, err := mcpclient.ConnectInMemory(context.Background(), "shop", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return shop, b
}

// confirmGuards returns guards that ask before each call to tools.
func confirmGuards(t *testing.T, tools ...string) *guard.Config {
	t.Helper()
	return &guard.Config{Confirm: tools, AuditLog: t.TempDir() + "/audit.log"}
}

// blockingTool is a local tool that waits for its context and reports
// when it was cancelled.
func blockingTool(started, cancelled chan<- struct{}) *agent.Tool {
	return &agent.Tool{
		Name:        "slowLookup",
		Description: "Looks something up slowly.",
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		},
	}
}

func asError[T error](err error, target *T) bool { return errors.As(err, target) }

// nextWithin is next with a longer bound, for a turn that runs a real
// MCP server's task.
func (s *sseStream) nextWithin(t *testing.T, d time.Duration) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %s", d)
		return sseEvent{}, false
	}
}

// offlineDemo names the assistant's tools for the offline demo model, as
// cmd/agentapp does.
var offlineDemo = offline.Tools{
	Order:        "getOrderStatus",
	Ticket:       "createTicket",
	Handoff:      "escalateToHuman",
	Search:       "searchKnowledgeBase",
	SearchRemote: "searchKnowledge",
}
