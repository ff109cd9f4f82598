package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// closer is a server whose Close takes a while and may fail.
type closer struct {
	name   string
	delay  time.Duration
	err    error
	mu     sync.Mutex
	closes int
}

func (c *closer) Name() string         { return c.name }
func (c *closer) Tools() []*agent.Tool { return nil }
func (c *closer) Close() error {
	time.Sleep(c.delay)
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	return c.err
}

// TestCloseAllParallelJoined: every server is closed at once, so closing
// takes as long as the slowest, and every error is kept, naming its server.
func TestCloseAllParallelJoined(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &closer{name: "a", delay: 4 * time.Second, err: errors.New("a broke")}
		b := &closer{name: "b", delay: 4 * time.Second}
		c := &closer{name: "c", delay: 4 * time.Second, err: errors.New("c broke")}
		start := time.Now()
		err := closeServers([]Server{a, nil, b, c})
		if d := time.Since(start); d != 4*time.Second {
			t.Errorf("closing three servers of 4 s each took %v, want 4s (in parallel)", d)
		}
		for _, want := range []string{`close MCP server "a": a broke`, `close MCP server "c": c broke`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err = %v; want it to hold %q", err, want)
			}
		}
		if a.closes != 1 || b.closes != 1 || c.closes != 1 {
			t.Errorf("closes = %d %d %d, want one each", a.closes, b.closes, c.closes)
		}
	})
}

// TestCloseAllBounded: a server whose Close hangs past closeTimeout is
// reported by name, and the caller is not held up longer.
func TestCloseAllBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := &closer{name: "slow", delay: time.Hour}
		fast := &closer{name: "fast"}
		start := time.Now()
		err := closeServers([]Server{slow, fast})
		if d := time.Since(start); d != closeTimeout {
			t.Errorf("CloseAll returned after %v, want CloseTimeout (%v)", d, closeTimeout)
		}
		if err == nil || !strings.Contains(err.Error(), `"slow" still closing`) {
			t.Errorf("err = %v; want it to name the server still closing", err)
		}
		synctest.Wait()
		time.Sleep(time.Hour) // let the slow close end inside the bubble
	})
}

// TestSourcesHook: the host finds no sources of its own; the composition's
// hook finds them, and a hook that finds none still gives an empty list.
func TestSourcesHook(t *testing.T) {
	ctx := context.Background()
	h, err := newHost(ctx, config{Model: scripted.New(), Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if got := h.Sources("see [1]", []string{`{"hits":[{"no":1,"docId":"a","title":"A"}]}`}); got == nil || len(got) != 0 {
		t.Errorf("without a hook: %#v, want an empty list", got)
	}
	var seen []string
	h2, err := newHost(ctx, config{Model: scripted.New(), Store: openTestStore(t), Sources: func(answer string, outs []string) []Source {
		seen = append([]string{answer}, outs...)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if got := h2.Sources("see [1]", []string{"out"}); got == nil || len(got) != 0 || len(seen) != 2 || seen[1] != "out" {
		t.Errorf("with a hook: %#v (the hook saw %q)", got, seen)
	}
}

// liveServer is a supervised server whose tool list a test changes.
type liveServer struct {
	name  string
	mu    sync.Mutex
	tools []*agent.Tool
	gen   uint64
}

func (s *liveServer) Name() string { return s.name }
func (s *liveServer) Close() error { return nil }
func (s *liveServer) Tools() []*agent.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}
func (s *liveServer) offer(names ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tools = nil
	for _, n := range names {
		s.tools = append(s.tools, &agent.Tool{Name: n, Origin: s.name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage) (any, error) { return s.name + ":" + n, nil }})
	}
	s.gen++
}
func (s *liveServer) Status() mcpclient.Status {
	return mcpclient.Status{State: mcpclient.StateConnected}
}
func (s *liveServer) Restart(context.Context) error { return nil }
func (s *liveServer) Refresh(context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, nil
}

// TestTableMidSessionClash: a clash that appears while the host runs keeps
// the tool already in the table, skips the newcomer with one warning, and
// takes the rest of the new lists.
func TestTableMidSessionClash(t *testing.T) {
	ctx := context.Background()
	alpha, beta := &liveServer{name: "alpha"}, &liveServer{name: "beta"}
	alpha.offer("a1")
	beta.offer("shared")
	var notices []Notice
	h, err := newHost(ctx, config{Model: scripted.New(), Servers: []Server{alpha, beta}, Store: openTestStore(t),
		Notify: func(n Notice) { notices = append(notices, n) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	alpha.offer("a1", "shared", "a2", "a2")
	beta.offer("shared", "b2")
	set := h.Tools().Refresh(ctx)
	if got := set.Names(); !slices.Equal(got, []string{"a1", "a2", "shared", "b2"}) {
		t.Errorf("table %v", got)
	}
	if tool, _ := set.Get("shared"); tool.Origin != "beta" {
		t.Errorf("shared from %s, want beta", tool.Origin)
	}
	var warnings []string
	for _, n := range notices {
		if n.Warning {
			warnings = append(warnings, n.Text)
		}
	}
	all := strings.Join(warnings, "\n")
	if len(warnings) != 2 || !strings.Contains(all, `"beta"'s is kept`) || !strings.Contains(all, `two tools named "a2"`) {
		t.Errorf("warnings %q, want one for the duplicate a2 and one keeping beta's shared", warnings)
	}
	use := h.Tools().Use()
	if len(use) != 2 || use[0].Count() != "2 tools (2 skipped: name clash with shared from MCP server beta; offered more than once: a2)" {
		t.Errorf("alpha's use: %+v", use)
	}
}

// confirmAll approves every call.
type confirmAll struct{}

func (confirmAll) Confirm(context.Context, guard.ConfirmRequest) guard.Decision {
	return guard.Decision{Approved: true, Reason: "yes"}
}

// TestRunEvents: a turn reports its steps, its approvals and its end as
// events, in order, and stores the turn.
func TestRunEvents(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "shop"}
	srv.offer("refund")
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "refund", map[string]string{"orderId": "A-1"})}},
		scripted.Turn{Text: "done"},
	)
	g := guard.New(guard.Config{Confirm: []string{"refund"}}, confirmAll{}, nil)
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Guards: g, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var kinds []EventKind
	var mu sync.Mutex
	res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "refund A-1"}}, Stream: true,
		OnEvent: func(ev Event) { mu.Lock(); kinds = append(kinds, ev.Kind); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	want := []EventKind{EventAccepted, EventStepStart, EventToolStart, EventApprovalAsked, EventApprovalAnswered, EventToolEnd, EventStepStart, EventText, EventDone}
	if !slices.Equal(kinds, want) {
		t.Errorf("events %v, want %v", kinds, want)
	}
	if res.Answer != "done" || len(res.Steps) != 1 || res.Steps[0].Output != "shop:refund" {
		t.Errorf("result %+v", res)
	}
	n, ok, err := h.Sessions().Count(ctx, "s1")
	if err != nil || !ok || n != 4 {
		t.Errorf("stored %d messages (ok %v, err %v), want 4", n, ok, err)
	}
}

// askedConfirmer answers as told and counts the questions.
type askedConfirmer struct {
	approve bool
	asked   atomic.Int32
}

func (c *askedConfirmer) Confirm(context.Context, guard.ConfirmRequest) guard.Decision {
	c.asked.Add(1)
	return guard.Decision{Approved: c.approve, Reason: "as told"}
}

// TestConfirmerBelongsToTheTurn: each turn's guarded calls are asked of
// that turn's confirmer, not of one the host keeps for every front end; a
// turn without one (and a host without a default) is refused. A call made
// outside a turn asks the confirmer it was given.
func TestConfirmerBelongsToTheTurn(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "shop"}
	srv.offer("refund")
	turns := []scripted.Turn{}
	for range 3 {
		turns = append(turns, scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "refund", map[string]string{"orderId": "A-1"})}}, scripted.Turn{Text: "done"})
	}
	g := guard.New(guard.Config{Confirm: []string{"refund"}}, nil, nil)
	h, err := newHost(ctx, config{Model: scripted.New(turns...), Servers: []Server{srv}, Guards: g, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	yes, no := &askedConfirmer{approve: true}, &askedConfirmer{}
	for i, c := range []*askedConfirmer{yes, no, nil} {
		turn := Turn{Session: fmt.Sprintf("s%d", i), Text: "refund A-1"}
		if c != nil {
			turn.Confirmer = c
		}
		res, err := h.Run(ctx, turn)
		if err != nil {
			t.Fatal(err)
		}
		ran := res.Steps[0].Output == "shop:refund"
		if want := c == yes; ran != want {
			t.Errorf("turn %d: the call ran = %v (output %q), want %v", i, ran, res.Steps[0].Output, want)
		}
	}
	if yes.asked.Load() != 1 || no.asked.Load() != 1 {
		t.Errorf("asked %d and %d times, want once each", yes.asked.Load(), no.asked.Load())
	}
	tool, ok := h.Tools().Current().Get("refund")
	if !ok {
		t.Fatal("no refund tool")
	}
	if _, err := h.Call(ctx, tool, json.RawMessage(`{"orderId":"A-1"}`), yes); err != nil || yes.asked.Load() != 2 {
		t.Errorf("a call outside a turn: %v, asked %d times", err, yes.asked.Load())
	}
}
