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
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/toolsearch"
)

// giantSchema is a 2.9 MB input schema: one required argument whose enum
// lists 150,000 values.
func giantSchema() json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"topic":{"type":"string","description":"What to research.","enum":[`)
	for i := range 150_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"topic-%06d"`, i)
	}
	b.WriteString(`]}},"required":["topic"]}`)
	return json.RawMessage(b.String())
}

// A tool with a 2.9 MB schema is offered with its schema reduced, and a
// warning names the server and the tool, when the server connects.
func TestGiantSchemaReducedAtConnect(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "hostile"}
	srv.offer("echo")
	srv.tools = append(srv.tools, &agent.Tool{Name: "giant", Origin: "hostile", InputSchema: giantSchema(),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ran giant", nil }})
	var mu sync.Mutex
	var notices []string
	h, err := newHost(ctx, config{Model: &scriptModel{}, Servers: []Server{srv}, Store: storetest.Open(t),
		Notify: func(n Notice) { mu.Lock(); notices = append(notices, n.Text); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	giant, ok := h.Tools().Current().Get("giant")
	if !ok {
		t.Fatal("the giant tool is not in the table; its schema should be reduced, not the tool left out")
	}
	if n := len(giant.InputSchema); n > toolsearch.MaxSchemaBytes {
		t.Errorf("the table's schema of giant is %d bytes, over %d", n, toolsearch.MaxSchemaBytes)
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(giant.InputSchema, &s); err != nil || s.Properties["topic"]["type"] != "string" || !slices.Equal(s.Required, []string{"topic"}) {
		t.Errorf("the reduced schema %s lost the argument: %v", giant.InputSchema, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(notices, func(n string) bool {
		return strings.Contains(n, "server hostile") && strings.Contains(n, "tool giant") && strings.Contains(n, "reduced")
	}) {
		t.Errorf("no warning names the server and the tool: %q", notices)
	}
}

// A schema that stays too large even reduced leaves its tool out, with a
// warning.
func TestCapSchemaLeavesOut(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"argument_number_%d":{"type":"string","description":"%s"}`, i, strings.Repeat("x", 100))
	}
	b.WriteString(`}}`)
	var warnings []string
	got := capSchema(&agent.Tool{Name: "wide", Origin: "hostile", InputSchema: json.RawMessage(b.String())}, &warnings)
	if got != nil || len(warnings) != 1 || !strings.Contains(warnings[0], "tool wide") || !strings.Contains(warnings[0], "left out") {
		t.Errorf("capSchema: %v, warnings %q; want the tool left out with a warning", got, warnings)
	}
	small := &agent.Tool{Name: "small", Origin: "s", InputSchema: json.RawMessage(`{"type":"object"}`)}
	if got := capSchema(small, &warnings); got != small || len(warnings) != 1 {
		t.Errorf("a small schema was changed")
	}
}

// failingModel answers the first call with a search and fails the
// second, as a provider that refuses an oversized request does.
type failingModel struct {
	scriptModel
	fail bool
}

func (m *failingModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	m.mu.Lock()
	fail := m.fail && len(m.turns) == 0
	m.mu.Unlock()
	if fail {
		return nil, errors.New("the provider refused the request")
	}
	return m.scriptModel.Stream(ctx, req, onText)
}

func (m *failingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

// The tools a failed turn loaded are not kept; a request that does not
// fit unloads the session's loaded tools, so the next turn works; and
// UnloadTool unloads one by name.
func TestToolSearchUnload(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "big"}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	db := storetest.New(t)
	search := func(name string) []model.ToolCall {
		return []model.ToolCall{{ID: name, Name: toolsearch.SearchToolName, Arguments: json.RawMessage(`{"query":"big__` + name + `"}`)}}
	}
	m := &failingModel{scriptModel: scriptModel{turns: [][]model.ToolCall{search("tool_42")}}, fail: true}
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Store: db.Open()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	turn := func(text string) error {
		_, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: text}}})
		return err
	}
	if err := turn("use tool 42"); err == nil {
		t.Fatal("the turn whose second request failed succeeded")
	}
	if st := h.ToolSearch(ctx, "s1"); len(st.Loaded) != 0 {
		t.Errorf("a failed turn's loads were kept: %v", st.Loaded)
	}

	m.fail = false
	m.turns = [][]model.ToolCall{search("tool_42"), search("tool_07")}
	if err := turn("load two"); err != nil {
		t.Fatal(err)
	}
	if st := h.ToolSearch(ctx, "s1"); !slices.Contains(st.Loaded, "tool_42") || !slices.Contains(st.Loaded, "tool_07") {
		t.Fatalf("loaded %v; want tool_42 and tool_07", st.Loaded)
	}
	if err := h.UnloadTool(ctx, "s1", "tool_07"); err != nil {
		t.Fatal(err)
	}
	if err := h.UnloadTool(ctx, "s1", "tool_07"); !errors.Is(err, ErrNotLoaded) || !strings.Contains(err.Error(), "tool_42") {
		t.Errorf("unloading a tool twice: %v; want ErrNotLoaded naming what is loaded", err)
	}

	// A host with a window too small for the loaded tools: the request
	// does not fit, the error says the tools were unloaded, and a
	// restart over the same database no longer offers them.
	small, err := newHost(ctx, config{Model: &scriptModel{}, Servers: []Server{srv}, Store: db.Open(), Context: ContextOptions{Window: 200, Reply: 50}})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	_, err = small.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "hello"}}})
	var ce *ContextError
	if !errors.As(err, &ce) || !slices.Equal(ce.Unloaded, []string{"tool_42"}) || !strings.Contains(err.Error(), "unloaded") {
		t.Fatalf("a request over the window: %v; want a ContextError that unloaded tool_42", err)
	}
	m2 := &scriptModel{}
	h2, err := newHost(ctx, config{Model: m2, Servers: []Server{srv}, Store: db.Open()})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if st := h2.ToolSearch(ctx, "s1"); len(st.Loaded) != 0 {
		t.Errorf("after the unload a restart still has %v loaded", st.Loaded)
	}
}
