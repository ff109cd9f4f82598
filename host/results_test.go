package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/resultstore"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/toolsearch"
)

// bigText is about 3 MB of lines of Chinese, English and numbers.
func bigText() string {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"row":%d,"订单":"A-%d","状态":"已发货 shipped","备注":"预计三天内送达，请留意短信通知。"}`+"\n", i, 100000+i)
	}
	return b.String()
}

// readerModel is a scripted model that follows the handles it is given:
// on the user's message it calls first; on a result whose note or page
// names a next readToolResult call it makes that call, up to pages
// times; then it answers. It records every request.
type readerModel struct {
	first model.ToolCall
	pages int

	mu   sync.Mutex
	reqs []*model.Request
	read int
}

var nextCall = regexp.MustCompile(`readToolResult \{"id":"(tr_[0-9a-f]+)","offset":(\d+)\}`)

func (m *readerModel) Name() string { return "gpt-4o" }

func (m *readerModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

func (m *readerModel) Stream(_ context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := *req
	cp.Messages = slices.Clone(req.Messages)
	m.reqs = append(m.reqs, &cp)
	last := req.Messages[len(req.Messages)-1]
	switch {
	case last.Role == model.RoleUser:
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{m.first}}}, nil
	case last.Role == model.RoleTool && m.read < m.pages:
		if c := nextCall.FindStringSubmatch(last.Content); c != nil {
			m.read++
			call := model.ToolCall{ID: fmt.Sprintf("r%d", m.read), Name: resultstore.ReadToolName,
				Arguments: json.RawMessage(fmt.Sprintf(`{"id":%q,"offset":%s}`, c[1], c[2]))}
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}}}, nil
		}
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}}, nil
}

func (m *readerModel) requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

func toolNames(specs []model.ToolSpec) []string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return names
}

// TestRunCutsLargeResult: an MCP tool returning 3 MB gives the model a
// head within the cap, a note with the handle, and readToolResult from the
// next step on; the pages the model reads are the bytes that follow; the
// turn's event says it was cut; and after a restart of the host over the
// same database the session still reads the stored result.
func TestRunCutsLargeResult(t *testing.T) {
	ctx := context.Background()
	big := bigText()
	srv := &liveServer{name: "db"}
	srv.tools = []*agent.Tool{{Name: "dump", Origin: "db", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return big, nil }}}
	m := &readerModel{first: model.ToolCall{ID: "c1", Name: "dump", Arguments: json.RawMessage(`{}`)}, pages: 2}
	db := storetest.New(t) // opened twice: a restart over the same database
	h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Store: db.Open(), MaxSteps: 10})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var cuts []*ResultCut
	res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "dump it"}},
		OnEvent: func(ev Event) {
			if ev.Kind == EventToolEnd {
				mu.Lock()
				cuts = append(cuts, ev.Cut)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	h.Close()
	est := budget.NewEstimator(budget.FamilyO200k)
	reqs := m.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4 (dump, two pages, answer)", len(reqs))
	}
	for i, r := range reqs {
		for _, msg := range r.Messages {
			if n := est.Text(msg.Content); n > resultstore.DefaultMaxTokens {
				t.Errorf("request %d carries a %s message of %d tokens, over the cap %d", i+1, msg.Role, n, resultstore.DefaultMaxTokens)
			}
		}
		hasRead := slices.Contains(toolNames(r.Tools), resultstore.ReadToolName)
		if hasRead != (i > 0) {
			t.Errorf("request %d offers readToolResult: %v, want it from the step after the cut on (%v)", i+1, hasRead, toolNames(r.Tools))
		}
	}
	if len(cuts) != 3 || cuts[0] == nil || cuts[1] != nil || cuts[2] != nil {
		t.Fatalf("cuts reported per call %v, want the dump's only", cuts)
	}
	c := cuts[0]
	if c.Bytes != len(big) || c.ID == "" || !strings.Contains(c.Notice, "dump returned "+strconv.Itoa(len(big))+" bytes") || !strings.Contains(c.Notice, c.ID) {
		t.Errorf("cut %+v", c)
	}
	// The pages continue the head byte for byte.
	got := big[:c.Shown]
	for _, step := range res.Steps[1:] {
		body, _, ok := strings.Cut(step.Output, "\n[Result ")
		if !ok {
			t.Fatalf("a page without its position line: %q", step.Output[max(0, len(step.Output)-200):])
		}
		got += body + "\n"
	}
	if !strings.HasPrefix(big, got) || len(got) <= c.Shown {
		t.Errorf("the head and two pages (%d bytes) are not the start of the result", len(got))
	}

	// A restart: the session keeps readToolResult and its stored result.
	m2 := &readerModel{first: model.ToolCall{ID: "c9", Name: resultstore.ReadToolName,
		Arguments: json.RawMessage(fmt.Sprintf(`{"id":%q,"offset":%d}`, c.ID, len(got)))}}
	h2, err := newHost(ctx, config{Model: m2, Servers: []Server{srv}, Store: db.Open()})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	res2, err := h2.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "read on"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tools := toolNames(m2.requests()[0].Tools); !slices.Contains(tools, resultstore.ReadToolName) {
		t.Errorf("after a restart the session is not offered readToolResult: %v", tools)
	}
	if out := res2.Steps[0].Output; !strings.HasPrefix(big[len(got):], strings.SplitN(out, "\n[Result ", 2)[0]) || res2.Steps[0].Err != nil {
		t.Errorf("reading after a restart: %v %q", res2.Steps[0].Err, out[:min(200, len(out))])
	}
	// Another session cannot read it, and is not offered the tool.
	m3 := &readerModel{first: m2.first}
	h2.cfg.Model = m3
	res3, err := h2.Run(ctx, Turn{Session: "s2", Messages: []model.Message{{Role: model.RoleUser, Content: "read theirs"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tools := toolNames(m3.requests()[0].Tools); slices.Contains(tools, resultstore.ReadToolName) {
		t.Errorf("a session without cut results is offered readToolResult: %v", tools)
	}
	if e := res3.Steps[0].Err; e == nil {
		t.Errorf("another session read the result: %q", res3.Steps[0].Output[:100])
	}
}

// TestRunCutCaps: a server's own cap (maxOutputTokens) applies to its
// tools, the global one to the others and to local tools; a huge error
// message is cut too.
func TestRunCutCaps(t *testing.T) {
	ctx := context.Background()
	text := strings.Repeat("line of the result\n", 2000) // about 8,000 tokens
	mk := func(origin, name string, fail bool) *agent.Tool {
		return &agent.Tool{Name: name, Origin: origin, InputSchema: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				if fail {
					return nil, fmt.Errorf("failed: %s", text)
				}
				return text, nil
			}}
	}
	small, wide := &liveServer{name: "small"}, &liveServer{name: "wide"}
	small.tools = []*agent.Tool{mk("small", "s", false)}
	wide.tools = []*agent.Tool{mk("wide", "w", false), mk("wide", "werr", true)}
	local := mk("", "l", false)
	calls := []model.ToolCall{{ID: "1", Name: "s"}, {ID: "2", Name: "w"}, {ID: "3", Name: "l"}, {ID: "4", Name: "werr"}}
	m := &readerModel{}
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{local}, Servers: []Server{small, wide}, Store: openTestStore(t),
		Results: &resultOptions{MaxTokens: 20_000, PerServer: map[string]int{"small": 1000}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	m.first = calls[0]
	cut := map[string]bool{}
	var mu sync.Mutex
	for _, c := range calls {
		m.first = c
		_, err := h.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "go"}},
			OnEvent: func(ev Event) {
				if ev.Kind == EventToolEnd {
					mu.Lock()
					cut[ev.Call.Name] = ev.Cut != nil
					mu.Unlock()
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !cut["s"] || cut["w"] || cut["l"] {
		t.Errorf("cut %v: want s (its server's cap 1000) cut, w and l (the global 20000) whole", cut)
	}
	h.cfg.Results = nil
	h2, err := newHost(ctx, config{Model: m, Servers: []Server{wide}, Store: openTestStore(t), Results: &resultOptions{MaxTokens: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	m.first = calls[3]
	res, err := h2.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	e := res.Steps[0].Err
	if e == nil || len(e.Error()) > len(text)/2 || !strings.Contains(e.Error(), "Result cut") {
		t.Errorf("a huge error is not cut: %d bytes", len(fmt.Sprint(e)))
	}
}

// TestToolSearchDefersAndKeeps: with 60 MCP tools the first request
// carries the local tools and searchTools only; a search by exact name
// loads that tool only, which is then callable; it stays loaded for the
// session after a restart, and another session does not have it.
func TestToolSearchDefersAndKeeps(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "big"}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	local := &agent.Tool{Name: "localTool", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	db := storetest.New(t) // opened twice: a restart over the same database
	m := &scriptModel{turns: [][]model.ToolCall{
		{{ID: "1", Name: toolsearch.SearchToolName, Arguments: json.RawMessage(`{"query":"big__tool_42"}`)}},
		{{ID: "2", Name: "tool_42", Arguments: json.RawMessage(`{}`)}},
	}}
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{local}, Servers: []Server{srv}, Store: db.Open()})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "use tool 42"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := h.ToolSearch(ctx, "s1")
	h.Close()
	reqs := m.requests()
	if got := toolNames(reqs[0].Tools); !slices.Equal(got, []string{"localTool", toolsearch.SearchToolName}) {
		t.Errorf("first request offers %v, want the local tool and searchTools only", got)
	}
	// A search by exact name loads that tool only.
	if got := toolNames(reqs[1].Tools); !slices.Equal(got, []string{"localTool", "tool_42", toolsearch.SearchToolName}) {
		t.Errorf("after the search the request offers %v, want tool_42 loaded and no other", got)
	}
	if len(res.Steps) != 2 || !strings.HasPrefix(res.Steps[0].Output, "Found") || !strings.Contains(strings.SplitN(res.Steps[0].Output, "\n", 3)[1], "tool_42") {
		t.Errorf("the search: %+v", res.Steps)
	}
	if res.Steps[1].Err != nil || res.Steps[1].Output != "big:tool_42" {
		t.Errorf("the loaded tool's call: %v %q", res.Steps[1].Err, res.Steps[1].Output)
	}
	if !st.Deferred || !slices.Contains(st.Loaded, "tool_42") || len(st.Waiting) != 60-len(st.Loaded) {
		t.Errorf("state %+v", st)
	}

	// A restart over the same database: the session still has tool_42.
	m2 := &scriptModel{turns: [][]model.ToolCall{{{ID: "3", Name: "tool_42", Arguments: json.RawMessage(`{}`)}}}}
	h2, err := newHost(ctx, config{Model: m2, Local: []*agent.Tool{local}, Servers: []Server{srv}, Store: db.Open()})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	res2, err := h2.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "again"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(m2.requests()[0].Tools); !slices.Contains(got, "tool_42") || len(got) > 2+len(st.Loaded) {
		t.Errorf("after a restart the session is offered %v, want its loaded tools", got)
	}
	if res2.Steps[0].Output != "big:tool_42" {
		t.Errorf("after a restart: %v %q", res2.Steps[0].Err, res2.Steps[0].Output)
	}
	if other := h2.ToolSearch(ctx, "s2"); len(other.Loaded) != 0 {
		t.Errorf("another session has loaded %v", other.Loaded)
	}
}

// TestToolSearchModes: off offers every tool; auto with few small tools
// offers them all; on defers even those.
func TestToolSearchModes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		mode   toolsearch.Mode
		tools  int
		defers bool
	}{{toolsearch.ModeOff, 60, false}, {toolsearch.ModeAuto, 5, false}, {toolsearch.ModeAuto, 41, true}, {toolsearch.ModeOn, 5, true}} {
		srv := &liveServer{name: "x"}
		var names []string
		for i := range c.tools {
			names = append(names, fmt.Sprintf("t%d", i))
		}
		srv.offer(names...)
		m := &scriptModel{}
		h, err := newHost(ctx, config{Model: m, Servers: []Server{srv}, Store: openTestStore(t), ToolSearch: &ToolSearchOptions{Mode: c.mode}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		h.Close()
		got := toolNames(m.requests()[0].Tools)
		if deferred := slices.Equal(got, []string{toolsearch.SearchToolName}); deferred != c.defers || (!c.defers && len(got) != c.tools) {
			t.Errorf("mode %s with %d tools offers %d tools %v, want deferred %v", c.mode, c.tools, len(got), got[:min(3, len(got))], c.defers)
		}
	}
}

// TestLongDescriptionCut: a tool description over 2 KB is offered cut,
// with a warning naming the server; the server's own tool is unchanged.
func TestLongDescriptionCut(t *testing.T) {
	ctx := context.Background()
	srv := &liveServer{name: "verbose"}
	srv.offer("essay")
	long := strings.Repeat("This tool does a great many things. ", 150)
	srv.tools[0].Description = long
	var warnings []string
	h, err := newHost(ctx, config{Model: &scriptModel{}, Servers: []Server{srv}, Store: openTestStore(t),
		Notify: func(n Notice) { warnings = append(warnings, n.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tool, _ := h.Tools().Current().Get("essay")
	if len(tool.Description) > toolsearch.MaxTextBytes || !strings.Contains(tool.Description, "[cut at") {
		t.Errorf("the description offered is %d bytes", len(tool.Description))
	}
	if srv.tools[0].Description != long {
		t.Error("the server's own tool was changed")
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "server verbose") || !strings.Contains(warnings[0], "essay") {
		t.Errorf("warnings %q, want one naming the server and the tool", warnings)
	}
}

// scriptModel replays tool calls, one list per step, then answers; it
// records the requests.
type scriptModel struct {
	mu    sync.Mutex
	turns [][]model.ToolCall
	reqs  []*model.Request
}

func (m *scriptModel) Name() string { return "gpt-4o" }
func (m *scriptModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}
func (m *scriptModel) Stream(_ context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := *req
	m.reqs = append(m.reqs, &cp)
	if len(m.turns) == 0 {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}}, nil
	}
	calls := m.turns[0]
	m.turns = m.turns[1:]
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: calls}}, nil
}
func (m *scriptModel) requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.reqs)
}

// fixtureServers are the tools/list dumps of real npm MCP servers
// (toolsearch/testdata, written by bench/toolsearch/dump.sh) as servers.
func fixtureServers(t *testing.T) []Server {
	t.Helper()
	files, err := filepath.Glob("../toolsearch/testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var servers []Server
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "queries") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var dump struct {
			Server string `json:"server"`
			Tools  []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &dump); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := &liveServer{name: dump.Server}
		for _, d := range dump.Tools {
			s.tools = append(s.tools, &agent.Tool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema, Origin: dump.Server,
				Execute: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }})
		}
		servers = append(servers, s)
	}
	if len(servers) < 5 {
		t.Fatalf("%d fixture servers, want at least 5", len(servers))
	}
	return servers
}

// TestToolSearchFirstRequestTokens measures the tool definitions of the
// first request the host sends with the real servers' lists, with tool
// search (auto) and without (off): the MCP tools' tokens must drop by at
// least 85 %.
func TestToolSearchFirstRequestTokens(t *testing.T) {
	ctx := context.Background()
	est := budget.NewEstimator(budget.FamilyO200k)
	tokens := map[toolsearch.Mode]int{}
	count := map[toolsearch.Mode]int{}
	for _, mode := range []toolsearch.Mode{toolsearch.ModeOff, toolsearch.ModeAuto} {
		m := &scriptModel{}
		h, err := newHost(ctx, config{Model: m, Servers: fixtureServers(t), Store: openTestStore(t), ToolSearch: &ToolSearchOptions{Mode: mode}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Run(ctx, Turn{Session: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		h.Close()
		tokens[mode] = est.Tools(m.requests()[0].Tools)
		count[mode] = len(m.requests()[0].Tools)
	}
	saved := 100 * (1 - float64(tokens[toolsearch.ModeAuto])/float64(tokens[toolsearch.ModeOff]))
	t.Logf("first request: %d tools, %d tokens without tool search; %d tools, %d tokens with: %.1f%% fewer",
		count[toolsearch.ModeOff], tokens[toolsearch.ModeOff], count[toolsearch.ModeAuto], tokens[toolsearch.ModeAuto], saved)
	if saved < 85 {
		t.Errorf("tool search saves %.1f%% of the first request's tool tokens, want at least 85%%", saved)
	}
}

// pruneCounter is a result store that counts its prunes.
type pruneCounter struct {
	*resultstore.Memory
	mu     sync.Mutex
	prunes int
}

func (p *pruneCounter) Prune(ctx context.Context) error {
	p.mu.Lock()
	p.prunes++
	p.mu.Unlock()
	return p.Memory.Prune(ctx)
}

// TestStoresArePruned: storing cut results prunes the result store at
// most every ten minutes, and loaded tools older than 30 days are deleted
// when a later search loads tools.
func TestStoresArePruned(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	big := strings.Repeat("word ", 2000)
	srv := &liveServer{name: "many"}
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("tool_%02d", i))
	}
	srv.offer(names...)
	local := &agent.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return big, nil }}
	store := &pruneCounter{Memory: resultstore.NewMemory(nil)}
	db := storetest.New(t) // opened twice: a restart over the same database
	m := &scriptModel{}
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{local}, Servers: []Server{srv}, Store: db.Open(), Now: clock,
		Results: &resultOptions{MaxTokens: 500, Store: store}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	run := func(session string, calls ...model.ToolCall) {
		t.Helper()
		m.turns = [][]model.ToolCall{calls}
		if _, err := h.Run(ctx, Turn{Session: session, Messages: []model.Message{{Role: model.RoleUser, Content: "go"}}}); err != nil {
			t.Fatal(err)
		}
	}
	bigCall := model.ToolCall{ID: "b", Name: "big", Arguments: json.RawMessage(`{}`)}
	run("a", bigCall)
	now = now.Add(time.Minute)
	run("a", bigCall)
	if store.prunes != 1 {
		t.Errorf("%d prunes after two cuts a minute apart, want 1", store.prunes)
	}
	now = now.Add(11 * time.Minute)
	run("a", bigCall)
	if store.prunes != 2 {
		t.Errorf("%d prunes after a cut 11 minutes later, want 2", store.prunes)
	}

	search := func(q string) model.ToolCall {
		return model.ToolCall{ID: "s", Name: toolsearch.SearchToolName, Arguments: json.RawMessage(`{"query":"` + q + `"}`)}
	}
	run("old", search("tool_01"))
	now = now.Add(31 * 24 * time.Hour)
	run("new", search("tool_02"))
	h2, err := newHost(ctx, config{Model: &scriptModel{}, Servers: []Server{srv}, Store: db.Open(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	if old, recent := h2.ToolSearch(ctx, "old"), h2.ToolSearch(ctx, "new"); len(old.Loaded) != 0 || !slices.Contains(recent.Loaded, "tool_02") {
		t.Errorf("after 31 days: the old session has %v loaded (want none), the new one %v", old.Loaded, recent.Loaded)
	}
}
