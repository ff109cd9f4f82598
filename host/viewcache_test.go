package host

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/google/go-cmp/cmp"
)

// recordModel answers by the request alone, so that the same turns get
// the same answers whatever path built them: a tool call when the user's
// last message says "check", the answer once the result is in, a summary
// when asked to fold. It keeps a copy of every request.
type recordModel struct {
	mu   sync.Mutex
	reqs []model.Request
}

func (m *recordModel) Name() string { return "record" }

func (m *recordModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	m.mu.Lock()
	c := *req
	c.Messages = append([]model.Message(nil), req.Messages...)
	c.Tools = append([]model.ToolSpec(nil), req.Tools...)
	m.reqs = append(m.reqs, c)
	n := len(m.reqs)
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	switch {
	case req.System == summaryPrompt:
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("- folded at call %d: orders A-1000 and on asked about, all shipped", n)}}, nil
	case last.Role == model.RoleUser && strings.Contains(last.Content, "check"):
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: fmt.Sprintf("call-%d", n), Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"A-1024"}`)}}}}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("订单已发货 (answer %d).", n)}}, nil
}

func (m *recordModel) Stream(ctx context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
	return m.Generate(ctx, req)
}

func (m *recordModel) requests() []model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]model.Request(nil), m.reqs...)
}

// viewHost is a host on st whose views are read whole when cached is
// false (the path every turn took before the view cache).
func viewHost(t *testing.T, st *store.Store, m model.Model, cached bool) *Host {
	t.Helper()
	h, err := newHost(context.Background(), config{Model: m, Local: []*agent.Tool{orderTool()}, Store: st,
		System: "You are a support agent for an online shop.", Context: ContextOptions{Window: 2500}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if !cached {
		h.sessions.s.views = nil
	}
	return h
}

func viewTurn(t *testing.T, h *Host, session string, i int) {
	t.Helper()
	text := fmt.Sprintf("第 %d 个问题：订单 A-%d 什么时候到？", i, 1000+i)
	if i%3 == 0 {
		text += " Please check it."
	}
	if _, err := h.Run(context.Background(), Turn{Session: session, Messages: []model.Message{{Role: model.RoleUser, Content: text}}}); err != nil {
		t.Fatalf("turn %d: %v", i, err)
	}
}

// viewScript is a sequence of operations on one session by two hosts on
// the same database (two processes): main, whose requests are compared,
// and other, which writes the same session in between.
type viewScript func(t *testing.T, main, other func() *Host, reopen func())

// TestViewCacheMatchesFullRead plays the same turns through hosts that
// keep the session's view between turns and through hosts that read it
// whole every time: the model must receive exactly the same requests,
// through automatic folds, /compact, another process writing and folding
// the same session, and a session resumed by a new host.
func TestViewCacheMatchesFullRead(t *testing.T) {
	scripts := map[string]viewScript{
		"folding turns": func(t *testing.T, main, _ func() *Host, _ func()) {
			for i := range 60 {
				viewTurn(t, main(), "s", i)
			}
		},
		"compact": func(t *testing.T, main, _ func() *Host, _ func()) {
			for i := range 24 {
				viewTurn(t, main(), "s", i)
				if i%7 == 6 {
					if _, err := main().Compact(context.Background(), "s"); err != nil {
						t.Fatal(err)
					}
				}
			}
		},
		"second process": func(t *testing.T, main, other func() *Host, _ func()) {
			for i := range 48 {
				h := main()
				if i%5 == 2 || i%5 == 3 {
					h = other()
				}
				viewTurn(t, h, "s", i)
				if i%11 == 10 {
					if _, err := other().Compact(context.Background(), "s"); err != nil {
						t.Fatal(err)
					}
				}
			}
		},
		"resumed": func(t *testing.T, main, _ func() *Host, reopen func()) {
			for i := range 30 {
				viewTurn(t, main(), "s", i)
				if i%8 == 7 {
					reopen()
				}
			}
		},
	}
	for name, script := range scripts {
		t.Run(name, func(t *testing.T) {
			var got [2][]model.Request
			var views [2]*viewCache
			for k, cached := range []bool{true, false} {
				db := storetest.New(t)
				m := &recordModel{}
				var mainH *Host
				open := func() {
					if mainH != nil {
						mainH.Close()
					}
					mainH = viewHost(t, db.Open(), m, cached)
					if cached {
						views[k] = mainH.sessions.s.views
					}
				}
				open()
				other := viewHost(t, db.Open(), &recordModel{}, cached)
				script(t, func() *Host { return mainH }, func() *Host { return other }, open)
				got[k] = m.requests()
			}
			if len(got[0]) < 30 {
				t.Fatalf("only %d requests", len(got[0]))
			}
			if d := cmp.Diff(got[1], got[0]); d != "" {
				t.Errorf("the requests with the view cache differ from those of full reads (-full +cached):\n%s", d)
			}
			folded := 0
			for _, r := range got[0] {
				if strings.Contains(r.System, "- folded at call") {
					folded++
				}
			}
			if folded == 0 {
				t.Errorf("no request carried a summary; the script must fold")
			}
			if views[0].since.Load() == 0 {
				t.Errorf("the cached host never read only the new rows (%d whole reads)", views[0].whole.Load())
			}
		})
	}
}

// TestViewCacheSeesRewrite: a session removed and written again by
// another process under the same id (seqs reused) is read whole, not
// extended from the stale view.
func TestViewCacheSeesRewrite(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	m := &recordModel{}
	h := viewHost(t, db.Open(), m, true)
	for i := 1; i <= 4; i++ {
		viewTurn(t, h, "s", i)
	}
	other := db.Open()
	if _, err := other.DB.ExecContext(ctx, `DELETE FROM chat_sessions WHERE id = ?`, "s"); err != nil {
		t.Fatal(err)
	}
	ss, err := OpenSessionStore(ctx, other, nil)
	if err != nil {
		t.Fatal(err)
	}
	// As many messages as before, so the seqs line up; the last differs.
	var msgs []model.Message
	for i := range 4 {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: fmt.Sprintf("rewritten %d", i)},
			model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("reply %d", i)})
	}
	for range 3 {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "pad"}, model.Message{Role: model.RoleAssistant, Content: "ok"})
	}
	if err := ss.Append(ctx, "s", msgs); err != nil {
		t.Fatal(err)
	}
	before := h.sessions.s.views.whole.Load()
	viewTurn(t, h, "s", 100)
	reqs := m.requests()
	last := reqs[len(reqs)-1]
	if last.Messages[0].Content != "rewritten 0" {
		t.Errorf("after the rewrite the model saw %q first; want the rewritten session", last.Messages[0].Content)
	}
	if h.sessions.s.views.whole.Load() != before+1 {
		t.Errorf("the rewritten session was not read whole")
	}
}

// TestViewCacheLimit: with the cap on a view's messages, the cached view
// keeps the same newest messages, starting at a user message, as a full
// read.
func TestViewCacheLimit(t *testing.T) {
	for _, limit := range []int{5, 6, 7} {
		var got [2][]model.Request
		for k, cached := range []bool{true, false} {
			m := &recordModel{}
			h := viewHost(t, openTestStore(t), m, cached)
			h.sessions.s.viewLimit = limit
			for i := range 12 {
				viewTurn(t, h, "s", i)
			}
			got[k] = m.requests()
		}
		if d := cmp.Diff(got[1], got[0]); d != "" {
			t.Errorf("limit %d: the cached requests differ (-full +cached):\n%s", limit, d)
		}
	}
}

// TestViewCacheBounded: the cache keeps at most its number of sessions
// and its bytes, the least recently used going first.
func TestViewCacheBounded(t *testing.T) {
	c := newViewCache()
	c.maxSessions, c.maxBytes = 3, 2000
	est := budget.NewEstimator(budget.FamilyO200k)
	entry := func(text string) *cachedView {
		msgs := []model.Message{{Role: model.RoleUser, Content: text}}
		return &cachedView{v: view{msgs: msgs, seqs: []int64{1}, tokens: est.MessageTokens(msgs)}, lastSeq: 1, est: est}
	}
	for i := range 5 {
		c.put(fmt.Sprint(i), entry("hello"))
	}
	c.get("2")
	c.put("5", entry("hello"))
	if len(c.m) != 3 || c.m["2"] == nil || c.m["5"] == nil || c.m["4"] == nil {
		t.Errorf("cache holds %d sessions; want 2, 4 and 5", len(c.m))
	}
	c.put("big", entry(strings.Repeat("x", 1500)))
	if c.bytes > c.maxBytes || c.m["big"] == nil {
		t.Errorf("cache holds %d bytes, bound %d", c.bytes, c.maxBytes)
	}
	c.put("huge", entry(strings.Repeat("x", 5000)))
	if c.m["huge"] != nil || c.bytes > c.maxBytes {
		t.Errorf("a view over the whole bound was kept")
	}
}

// TestTurnEstimatesMatchPlainEstimator: the input estimate of every call
// of a turn, made from the estimates kept with the view and the memo,
// equals a fresh estimator's count of the request the model received.
func TestTurnEstimatesMatchPlainEstimator(t *testing.T) {
	m := &recordModel{}
	h := viewHost(t, openTestStore(t), m, true)
	var calls []CallUsage
	for i := range 40 {
		text := fmt.Sprintf("第 %d 个问题：订单 A-%d 什么时候到？", i, 1000+i)
		if i%3 == 0 {
			text += " Please check it."
		}
		res, err := h.Run(context.Background(), Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: text}}})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, res.Usage.Calls...)
	}
	reqs := m.requests()
	if len(calls) != len(reqs) {
		t.Fatalf("%d calls measured, %d requests made", len(calls), len(reqs))
	}
	plain := budget.NewEstimator(budget.LookupModel(m.Name()).Family)
	summaries := 0
	for i, c := range calls {
		if !c.Estimated {
			t.Fatalf("call %d was not estimated", i)
		}
		if c.Purpose == "summary" {
			summaries++
		}
		if want := plain.Request(&reqs[i]); c.InputTokens != want {
			t.Errorf("call %d (%s): input estimated at %d, a fresh estimate of its request is %d", i, c.Purpose, c.InputTokens, want)
		}
	}
	if summaries == 0 {
		t.Errorf("no summarizing call; the turns must fold")
	}
}

// TestViewCacheSeesRecreatedSession: a session removed and stored again
// by another process with the same last message at the same seq (only an
// earlier message differs) is read whole: its creation time differs.
func TestViewCacheSeesRecreatedSession(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	m := &recordModel{}
	h := viewHost(t, db.Open(), m, true)
	for i := 1; i <= 4; i++ {
		viewTurn(t, h, "s", i)
	}
	old, err := h.Sessions().Window(ctx, "s", 1000)
	if err != nil {
		t.Fatal(err)
	}
	other := db.Open()
	if _, err := other.DB.ExecContext(ctx, `DELETE FROM chat_sessions WHERE id = ?`, "s"); err != nil {
		t.Fatal(err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	ss, err := OpenSessionStore(ctx, other, later)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := append([]model.Message(nil), old...)
	rewritten[0].Content = "a different first question"
	if err := ss.Append(ctx, "s", rewritten); err != nil {
		t.Fatal(err)
	}
	viewTurn(t, h, "s", 100)
	reqs := m.requests()
	if got := reqs[len(reqs)-1].Messages[0].Content; got != "a different first question" {
		t.Errorf("after the session was recreated the model saw %q first; want the stored one", got)
	}
}

// TestViewCacheConcurrentTurns: turns of one session run at once (two
// browser tabs) share the cached view safely, and afterwards the cached
// view is the stored one.
func TestViewCacheConcurrentTurns(t *testing.T) {
	ctx := context.Background()
	h := viewHost(t, openTestStore(t), &recordModel{}, true)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				text := fmt.Sprintf("tab %d, question %d", g, i)
				if i%3 == 0 {
					text += " check"
				}
				if _, err := h.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: text}}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	est := h.est
	cached, err := h.sessions.s.view(ctx, "s", est)
	if err != nil {
		t.Fatal(err)
	}
	if h.sessions.s.views.since.Load() == 0 {
		t.Fatalf("no view was read from the cache")
	}
	var summary string
	var foldedSeq int64
	if err := h.sessions.s.st.DB.QueryRowContext(ctx, `SELECT COALESCE((SELECT summary FROM chat_context WHERE session_id = 's'), ''),
		COALESCE((SELECT folded_seq FROM chat_context WHERE session_id = 's'), 0)`).Scan(&summary, &foldedSeq); err != nil {
		t.Fatal(err)
	}
	full, err := h.sessions.s.readView(ctx, "s", summary, foldedSeq, est)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(full.v, cached, cmp.AllowUnexported(view{})); d != "" {
		t.Errorf("the cached view differs from the stored one (-stored +cached):\n%s", d)
	}
}
