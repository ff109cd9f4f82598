package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// These tests hold the web to the terminal's behaviour where the two had
// drifted apart (issue 25); each failed before the host was shared.

// liveServer is a supervised MCP server whose tool list the test changes
// mid-session, and which may offer resources.
type liveServer struct {
	name      string
	resources bool
	mu        sync.Mutex
	tools     []*agent.Tool
	gen       uint64
}

func (s *liveServer) Name() string { return s.name }
func (s *liveServer) Close() error { return nil }
func (s *liveServer) Tools() []*agent.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tools)
}

// offer replaces the tool list, as a restart or tools/list_changed does.
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
	return mcpclient.Status{State: mcpclient.StateConnected, Tools: len(s.Tools())}
}
func (s *liveServer) Restart(context.Context) error { return nil }
func (s *liveServer) Refresh(context.Context) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, nil
}
func (s *liveServer) OffersResources() bool { return s.resources }
func (s *liveServer) OffersPrompts() bool   { return false }
func (s *liveServer) Resources(context.Context) ([]*mcp.Resource, error) {
	return []*mcp.Resource{{URI: "note://1", Name: "note one"}}, nil
}
func (s *liveServer) ReadResource(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "the note"}}}, nil
}
func (s *liveServer) Prompts(context.Context) ([]*mcp.Prompt, error) { return nil, nil }
func (s *liveServer) GetPrompt(context.Context, string, map[string]string) (*mcp.GetPromptResult, error) {
	return nil, nil
}

// complete posts one OpenAI-style completion and fails on any status but 200.
func (e *testEnv) complete(t *testing.T, content string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"messages": []map[string]string{{"role": "user", "content": content}}})
	resp := e.post(t, "/v1/chat/completions", string(body))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /v1/chat/completions: %s %s", resp.Status, b)
	}
}

func toolNames(req *model.Request) []string {
	var out []string
	for _, s := range req.Tools {
		out = append(out, s.Name)
	}
	return out
}

// TestResourceToolsOnTheWeb: with a server that offers resources, the model
// gets listMcpResources and readMcpResource on the web as in the terminal.
func TestResourceToolsOnTheWeb(t *testing.T) {
	notes := &liveServer{name: "notes", resources: true}
	notes.offer("noteCount")
	m := scripted.New(scripted.Turn{Text: "ok"}, scripted.Turn{Text: "ok"})
	e := newEnv(t, m, func(o *envOptions) { o.Servers = append(o.Servers, notes) })
	e.complete(t, "what notes are there?")
	e.send(t, e.newSession(t), "and now?").rest(t)
	for i, req := range m.Requests() {
		got := toolNames(req)
		for _, want := range []string{"listMcpResources", "readMcpResource", "noteCount"} {
			if !slices.Contains(got, want) {
				t.Errorf("request %d offered %v; %s is missing", i, got, want)
			}
		}
	}
	if len(m.Requests()) != 2 {
		t.Errorf("%d model requests, want 2", len(m.Requests()))
	}
}

// TestDoneSourcesInCitationOrder: the done event's sources are
// {"no","docId","title"} in the order the answer cites them, the shape of
// the chat's JSON output.
func TestDoneSourcesInCitationOrder(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "searchKnowledgeBase", map[string]any{"query": "退货 差旅 住宿", "k": 3})}},
		scripted.Turn{Text: "见 [2]，另见 [1]。"},
	)
	e := newEnv(t, m, nil)
	evs := e.send(t, e.newSession(t), "退货和差旅标准？").rest(t)
	done := evs[len(evs)-1]
	if done.Name != "done" {
		t.Fatalf("last event %s: %s", done.Name, done.Data)
	}
	var raw struct {
		Sources []map[string]json.RawMessage `json:"sources"`
	}
	if err := json.Unmarshal(done.Data, &raw); err != nil {
		t.Fatal(err)
	}
	// Every citation of the answer finds its entry: at a document's first
	// citation, or in its "also" (a document is listed once).
	var order []string
	for _, s := range raw.Sources {
		keys := make([]string, 0, len(s))
		for k := range s {
			if k != "also" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		if !slices.Equal(keys, []string{"docId", "no", "title"}) {
			t.Errorf("a source has the fields %v, want docId, no, title (and also)", keys)
		}
		order = append(order, string(s["no"]))
		var also []int
		if a, ok := s["also"]; ok && json.Unmarshal(a, &also) == nil {
			for _, n := range also {
				order = append(order, strconv.Itoa(n))
			}
		}
	}
	if !slices.Equal(order, []string{"2", "1"}) {
		t.Errorf("sources in the order %v, want [2 1] (citation order): %s", order, done.Data)
	}
}

// TestMidSessionClashKeepsTheTableLive: a clash that appears while the
// server runs (a server offering a name twice, or a name another server
// already has) is settled as the chat settles it — the tool in the table
// stays, the newcomer is skipped — and the rest of the new lists is taken,
// rather than the whole table staying as it was.
func TestMidSessionClashKeepsTheTableLive(t *testing.T) {
	alpha := &liveServer{name: "alpha"}
	alpha.offer("a1")
	beta := &liveServer{name: "beta"}
	beta.offer("shared")
	m := scripted.New(scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	e := newEnv(t, m, func(o *envOptions) { o.Servers = append(o.Servers, alpha, beta) })
	e.complete(t, "first")

	// alpha now offers beta's tool and one of its own twice; beta adds one.
	alpha.offer("a1", "shared", "a2", "a2")
	beta.offer("shared", "b2")
	e.complete(t, "second")

	reqs := m.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	got := toolNames(reqs[1])
	for _, want := range []string{"a1", "a2", "b2", "shared"} {
		if !slices.Contains(got, want) {
			t.Errorf("second turn offered %v; %s is missing", got, want)
		}
	}
	if n := strings.Count(strings.Join(got, " "), "a2"); n != 1 {
		t.Errorf("a2 offered %d times, want once: %v", n, got)
	}
	set := e.srv.h.Tools().Current()
	if tool, ok := set.Get("shared"); !ok || tool.Origin != "beta" {
		t.Errorf("shared comes from %v, want beta (the server whose tool was in the table)", tool)
	}
}
