package host

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// A TypeScript SDK v2 server at 2026-07-28 adds a tool during a turn and
// announces it on subscriptions/listen: within a bound the host's live tool
// table has it, with a notice (what the chat shows), and the next turn's
// model is offered it and calls it. The lists' TTL is a minute, so only the
// announcement can bring the change.
func TestToolListChangedTSServerNext(t *testing.T) {
	ctx := context.Background()
	url := testkit.StartTSServerNext(t, filepath.Join("..", ".ci", "tsserver-next")) + "?ttl=60000"
	b, err := mcpclient.Connect(ctx, mcpconfig.Server{Name: "ts", URL: url})
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "grow", map[string]string{})}},
		scripted.Turn{Text: "grown"},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "extra", map[string]string{})}},
		scripted.Turn{Text: "done"},
	)
	var mu sync.Mutex
	var notices []string
	h, err := newHost(ctx, config{Model: m, Servers: []Server{b}, Store: openTestStore(t),
		Notify: func(n Notice) { mu.Lock(); notices = append(notices, n.Text); mu.Unlock() }})
	if err != nil {
		_ = b.Close()
		t.Fatal(err)
	}
	defer h.Close()
	ss := h.Sessions()
	id := ss.NewID()
	if err := ss.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Run(ctx, Turn{Session: id, Text: "grow"}); err != nil {
		t.Fatal(err)
	}
	// The announcement travels apart from the call's answer: the table
	// has the tool within the bound (the turn runner refreshes it before
	// each model call, as here).
	start := time.Now()
	for !slices.ContainsFunc(h.table.Refresh(ctx).Tools(), func(tl *agent.Tool) bool { return tl.Name == "extra" }) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the tool table does not have extra 5 s after the server announced it")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("extra in the table after %s", time.Since(start))
	res, err := h.Run(ctx, Turn{Session: id, Text: "use it"})
	if err != nil || res.Answer != "done" {
		t.Fatalf("second turn: %+v, %v", res, err)
	}
	reqs := m.Requests()
	if !slices.ContainsFunc(reqs[2].Tools, func(s model.ToolSpec) bool { return s.Name == "extra" }) {
		t.Errorf("the second turn's model was not offered extra")
	}
	if out := res.Steps; len(out) != 1 || !strings.Contains(out[0].Output, "extra") || out[0].Err != nil {
		t.Errorf("calling extra: %+v", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(notices, func(s string) bool { return strings.Contains(s, "tool list changed: added extra") }) {
		t.Errorf("notices: %q", notices)
	}
}

// slowRefresh is a supervised server whose re-listing takes a second.
type slowRefresh struct{ liveServer }

func (s *slowRefresh) Refresh(ctx context.Context) (uint64, error) {
	time.Sleep(time.Second)
	return s.liveServer.Refresh(ctx)
}

// The servers are refreshed before a model call all at once: with a list
// whose caching hint ran out each is listed again, and three round trips of
// a second take a second, not three.
func TestGenerationsConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		servers := []Server{&slowRefresh{liveServer{name: "a"}}, &closeServer{name: "plain"}, &slowRefresh{liveServer{name: "b"}}, &slowRefresh{liveServer{name: "c"}}}
		start := time.Now()
		gens, err := generations(context.Background(), servers)
		if d := time.Since(start); d != time.Second || err != nil || len(gens) != 4 {
			t.Errorf("refreshing three servers of a second each: %s, %v, %v", d, gens, err)
		}
	})
}
