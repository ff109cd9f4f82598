package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/toolsearch"
)

// refuseAll refuses every call it is asked about.
type refuseAll struct{}

func (refuseAll) Confirm(context.Context, guard.ConfirmRequest) guard.Decision {
	return guard.Decision{Reason: "the test says no"}
}

// TestToolSearchCallByName: a model that calls deferred tools by name
// without searching, plain or server-prefixed, gets them loaded for the
// session and run, through the same guards as any call; a name no tool
// has is still the engine's unknown-tool error.
func TestToolSearchCallByName(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { testCallByName(t, stream) })
	}
}

func testCallByName(t *testing.T, stream bool) {
	ctx := context.Background()
	srv := &liveServer{name: "big"}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	m := &scriptModel{turns: [][]model.ToolCall{{
		{ID: "1", Name: "tool_07", Arguments: json.RawMessage(`{}`)},
		{ID: "2", Name: "big__tool_09", Arguments: json.RawMessage(`{}`)},
		{ID: "3", Name: "tool_99", Arguments: json.RawMessage(`{}`)},
	}}}
	// The test's tools are unannotated: a rule allows the server's tools,
	// and AGENT_GUARD_CONFIRM still asks about tool_09.
	all, err := guard.ParsePattern("big:*")
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(guard.Config{Confirm: []string{"tool_09"}, Permissions: guard.Permissions{Rules: []guard.Rule{{Pattern: all, Permission: guard.Allow, Source: "the test"}}}}, refuseAll{}, nil)
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Guards: g, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var asked []string
	var mu sync.Mutex
	res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}, Stream: stream,
		OnEvent: func(ev Event) {
			if ev.Kind == EventApprovalAsked {
				mu.Lock()
				asked = append(asked, ev.Approval.Request.Tool)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Steps) != 3 {
		t.Fatalf("steps %+v, want 3", res.Steps)
	}
	if s := res.Steps[0]; s.Err != nil || s.Output != "big:tool_07" {
		t.Errorf("tool_07 called by name: %v %q, want it run", s.Err, s.Output)
	}
	if s := res.Steps[1]; s.ToolName != "tool_09" || s.Err != nil || !strings.Contains(s.Output, "did not approve") {
		t.Errorf("big__tool_09 called by name: %s %v %q, want tool_09 refused by its confirmation guard", s.ToolName, s.Err, s.Output)
	}
	if !slices.Equal(asked, []string{"tool_09"}) {
		t.Errorf("approvals asked for %v, want tool_09", asked)
	}
	if s := res.Steps[2]; s.Err == nil || !errors.Is(s.Err, agent.ErrToolNotFound) {
		t.Errorf("tool_99, which no server has: %v %q, want the unknown-tool error", s.Err, s.Output)
	}
	var called []string
	for _, msg := range res.Added {
		for _, c := range msg.ToolCalls {
			called = append(called, c.Name)
		}
	}
	if !slices.Equal(called, []string{"tool_07", "tool_09", "tool_99"}) {
		t.Errorf("the history records calls of %v, want the tools' own names", called)
	}
	reqs := m.requests()
	if got := toolNames(reqs[1].Tools); !slices.Equal(got, []string{"tool_07", "tool_09", toolsearch.SearchToolName}) {
		t.Errorf("the next request offers %v, want the two tools called and searchTools", got)
	}
	if st := h.ToolSearch(ctx, "s1"); !slices.Equal(st.Loaded, []string{"tool_07", "tool_09"}) {
		t.Errorf("loaded %v, want tool_07 and tool_09", st.Loaded)
	}
}

// TestToolSearchKeepsReplacedLocalTool: a server's tool that took the place
// of a local tool (the default clash policy) is offered in every request, as
// the local tool was, while the server's other tools are deferred; /tools'
// state counts it neither loaded nor waiting.
func TestToolSearchKeepsReplacedLocalTool(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "shop"}
	names := []string{"getOrderStatus"}
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	local := &agent.Tool{Name: "getOrderStatus", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "local", nil }}
	kb := &agent.Tool{Name: "searchKB", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "kb", nil }}
	m := &scriptModel{turns: [][]model.ToolCall{{{ID: "1", Name: "getOrderStatus", Arguments: json.RawMessage(`{}`)}}}}
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{kb, local}, Servers: []Server{srv}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if r := h.Tools().Report(); len(r.Overridden) != 1 || r.Overridden[0] != (Clash{Tool: "getOrderStatus", Server: "shop"}) {
		t.Fatalf("merge report %+v, want getOrderStatus overridden by shop", r)
	}
	res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "订单 A-1024 到哪了？"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(m.requests()[0].Tools); !slices.Equal(got, []string{"searchKB", "getOrderStatus", toolsearch.SearchToolName}) {
		t.Errorf("the first request offers %v, want searchKB, shop's getOrderStatus and searchTools", got)
	}
	if len(res.Steps) != 1 || res.Steps[0].Err != nil || res.Steps[0].Output != "shop:getOrderStatus" {
		t.Errorf("steps %+v, want shop's getOrderStatus run", res.Steps)
	}
	st := h.ToolSearch(ctx, "s1")
	if !st.Deferred || slices.Contains(st.Loaded, "getOrderStatus") || slices.Contains(st.Waiting, "getOrderStatus") || len(st.Waiting) != 60 {
		t.Errorf("tool search state %+v, want 60 deferred tools and getOrderStatus not among them", st)
	}
}

// TestToolSearchOfflineUseDeferredTool: the offline model asked to "use" a
// tool the host defers searches for it by name and then calls it, as a
// real model would, rather than searching the knowledge base.
func TestToolSearchOfflineUseDeferredTool(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "memory"}
	names := []string{"read_graph"}
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	all, err := guard.ParsePattern("memory:*")
	if err != nil {
		t.Fatal(err)
	}
	g := guard.New(guard.Config{Permissions: guard.Permissions{Rules: []guard.Rule{{Pattern: all, Permission: guard.Allow, Source: "the test"}}}}, refuseAll{}, nil)
	h, err := newHost(ctx, config{Model: offline.New(offline.Tools{}), Servers: []Server{srv}, Guards: g, Store: openTestStore(t), ToolSearch: &ToolSearchOptions{Mode: toolsearch.ModeOn}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, msg := range []string{"use read_graph", "调用 read_graph"} {
		res, err := h.Run(ctx, Turn{Session: "s-" + msg, Messages: []model.Message{{Role: model.RoleUser, Content: msg}}})
		if err != nil {
			t.Fatal(err)
		}
		var called []string
		for _, s := range res.Steps {
			called = append(called, s.ToolName)
		}
		if !slices.Equal(called, []string{toolsearch.SearchToolName, "read_graph"}) {
			t.Errorf("%q: calls %v, want searchTools then read_graph", msg, called)
		}
		if !strings.Contains(res.Answer, "memory:read_graph") || strings.Contains(res.Answer, toolsearch.SearchToolName) {
			t.Errorf("%q: answer %q, want read_graph's result alone", msg, res.Answer)
		}
	}
}
