package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/store"
)

// TestStepShowsCut: a tool result over the cap reaches the page cut, with
// a "cut" field on its step saying how large the whole is and its handle.
func TestStepShowsCut(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "row %d: 已发货 shipped\n", i)
	}
	big := b.String()
	dump := &agent.Tool{Name: "dump", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return big, nil }}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "dump", map[string]string{})}},
		scripted.Turn{Text: "done"},
	)
	e := newEnv(t, m, func(o *envOptions) { o.Local = append(o.Local, dump) })
	id := e.newSession(t)
	s := finalStep(t, e.send(t, id, "dump it").rest(t))
	if s.Cut == nil {
		t.Fatalf("the step of a 3 MB result has no cut field: output of %d bytes", len(s.Output))
	}
	if s.Cut.Bytes != len(big) || s.Cut.ID == "" || s.Cut.ShownBytes >= len(big) || !strings.Contains(s.Cut.Notice, s.Cut.ID) {
		t.Errorf("cut %+v", s.Cut)
	}
	if len(s.Output) > 200_000 || !strings.Contains(s.Output, "Result cut") {
		t.Errorf("the step's output is %d bytes, without the note", len(s.Output))
	}
}

// envOn starts a Server with the real local tools and servers on st, as
// a restarted process over the same database would.
func envOn(t *testing.T, st *store.Store, m model.Model, servers ...host.Server) *testEnv {
	t.Helper()
	o := &envOptions{Model: m, LocalTools: assistant.LocalTools, Servers: servers, Store: reopen(t, st)}
	o.AddressRate, o.SessionRate = Unlimited, Unlimited
	h := openHost(t, o)
	opts := o.Options
	opts.Host = h
	srv, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	ts.Config = srv.NewHTTPServer()
	ts.Start()
	return &testEnv{srv: srv, ts: ts, st: h.Store()}
}

func (e *testEnv) stop() {
	e.ts.Close()
	e.srv.Close()
}

// TestToolSearchSurvivesReload: with 60 MCP tools the page's first turn
// offers searchTools instead of them; the tool a search found stays
// loaded in the session when the server restarts over the same database.
func TestToolSearchSurvivesReload(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	many := &liveServer{name: "many"}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	many.offer(names...)
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "searchTools", map[string]string{"query": "tool_42"})}},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "tool_42", map[string]string{})}},
		scripted.Turn{Text: "done"},
	)
	e := envOn(t, st, m, many)
	id := e.newSession(t)
	s := finalStep(t, e.send(t, id, "run tool 42").rest(t))
	e.stop()
	if s.Tool != "searchTools" || !strings.Contains(s.Output, "tool_42") {
		t.Errorf("first step %+v", s)
	}
	reqs := m.Requests()
	first := specNames(reqs[0].Tools)
	if slices.Contains(first, "tool_07") || !slices.Contains(first, "searchTools") {
		t.Errorf("the first request offers %v, want searchTools instead of the 60 tools", first)
	}
	if !slices.Contains(specNames(reqs[1].Tools), "tool_42") {
		t.Errorf("after the search: %v", specNames(reqs[1].Tools))
	}

	m2 := scripted.New(scripted.Turn{Text: "again"})
	e2 := envOn(t, st, m2, many)
	defer e2.stop()
	e2.send(t, id, "again").rest(t)
	if got := specNames(m2.Requests()[0].Tools); !slices.Contains(got, "tool_42") || slices.Contains(got, "tool_07") {
		t.Errorf("after a restart the session is offered %v, want tool_42 still loaded", got)
	}
}

func specNames(specs []model.ToolSpec) []string {
	var n []string
	for _, s := range specs {
		n = append(n, s.Name)
	}
	return n
}
