package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/host/hosttest"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

// ruleModel is a deterministic model for chat tests. For a new user
// message it calls the tool named in a "call:NAME" word, else answers
// "echo: <message> (N messages)"; after tool results it answers
// "tool said: <results>". Its text is streamed in two pieces, to show that
// the chat writes deltas as they come.
type ruleModel struct {
	mu       sync.Mutex
	requests []*model.Request
	err      error // returned by every call when set
}

func (m *ruleModel) Name() string { return "rule-model" }

func (m *ruleModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

func (m *ruleModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	m.mu.Lock()
	cp := *req
	cp.Messages = append([]model.Message(nil), req.Messages...)
	m.requests = append(m.requests, &cp)
	err := m.err
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	last := req.Messages[len(req.Messages)-1]
	var text string
	var calls []model.ToolCall
	switch {
	case last.Role == model.RoleTool:
		var outs []string
		for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == model.RoleTool; i-- {
			outs = append([]string{req.Messages[i].Content}, outs...)
		}
		text = "tool said: " + strings.Join(outs, " | ")
	case strings.Contains(last.Content, "call:"):
		_, rest, _ := strings.Cut(last.Content, "call:")
		name, argText, _ := strings.Cut(rest, " ")
		// "call:tool {json}" calls tool with those arguments.
		args := json.RawMessage(`{"q":"x"}`)
		if argText = strings.TrimSpace(argText); strings.HasPrefix(argText, "{") && json.Valid([]byte(argText)) {
			args = json.RawMessage(argText)
		}
		calls = []model.ToolCall{{ID: "c1", Name: name, Arguments: args}}
	default:
		text = fmt.Sprintf("echo: %s (%d messages)", last.Content, len(req.Messages))
	}
	if onText != nil && text != "" {
		half := len(text) / 2
		for half > 0 && !utf8Start(text[half]) {
			half--
		}
		onText(text[:half])
		onText(text[half:])
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: text, ToolCalls: calls}}, nil
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func (m *ruleModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func (m *ruleModel) lastRequest() *model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.requests) == 0 {
		return nil
	}
	return m.requests[len(m.requests)-1]
}

// testTool is a local tool (origin "") or an MCP server's. A server's
// declares itself read-only, so that the default permission policy runs it
// and the tests see what they test; the tests of the policy clear it.
func testTool(name, origin string, fn func(ctx context.Context) (any, error)) *agent.Tool {
	return &agent.Tool{
		Name:        name,
		Description: "test tool " + name,
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Origin:      origin,
		ReadOnly:    origin != "",
		Validate:    origin == "",
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			return fn(ctx)
		},
	}
}

func constTool(name, origin, out string) *agent.Tool {
	return testTool(name, origin, func(context.Context) (any, error) { return out, nil })
}

// fakeServer is an MCP server stand-in that records Close.
type fakeServer struct {
	name   string
	tools  []*agent.Tool
	mu     sync.Mutex
	closed int
}

func (s *fakeServer) Name() string         { return s.name }
func (s *fakeServer) Tools() []*agent.Tool { return s.tools }
func (s *fakeServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
	return nil
}

func (s *fakeServer) closes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// openTestStore opens an empty database on the test backend
// (storetest.Backend).
func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t)
}

// harness is a chat with captured output.
type harness struct {
	out, err bytes.Buffer
	cfg      Config
	// host are the parts of the host under the chat, which open opens as
	// cmd/agentapp opens it (host.Open).
	host hostParts
}

// hostParts are what a test gives the host under its chat.
type hostParts struct {
	Model model.Model
	Local []*agent.Tool
	// Servers are connected; Inactive are not running, and Connect
	// starts one of them by name.
	Servers  []host.Server
	Inactive []host.Inactive
	Connect  func(ctx context.Context, name string) (host.Server, error)
	// Guards configure the guards; nil lets every call run without a
	// question.
	Guards      *guard.Config
	Store       *store.Store
	System      string
	MaxSteps    int
	TurnTimeout time.Duration
	Context     host.ContextOptions
}

// openHost opens the host of p with host.Open, as cmd/agentapp does, with
// hosttest's defaults; its notices are written to errOut as the command
// line writes them. The test owns the store: several chats may open over
// it.
func openHost(p *hostParts, hints host.Hints, now func() time.Time, errOut io.Writer) (*host.Host, error) {
	o := &host.Options{
		Model: p.Model, Local: p.Local, Servers: p.Servers, Inactive: p.Inactive, Guards: p.Guards, Store: p.Store, KeepStore: true,
		System: p.System, MaxSteps: p.MaxSteps, TurnTimeout: p.TurnTimeout, Context: p.Context, Hints: hints, Now: now,
		Notify: func(n host.Notice) {
			if n.Warning {
				fmt.Fprintln(errOut, "agentapp: warning:", n.Text)
				return
			}
			fmt.Fprintln(errOut, n.Text)
		},
	}
	if p.Connect != nil {
		o.Connect = func(ctx context.Context, c mcpconfig.Server) (host.Server, error) { return p.Connect(ctx, c.Name) }
	} else {
		o.Connect = func(context.Context, mcpconfig.Server) (host.Server, error) { return nil, host.ErrCannotConnect }
	}
	if err := hosttest.Defaults(o, ""); err != nil {
		return nil, err
	}
	return host.Open(context.Background(), o)
}

// open opens the harness's host and a chat over it.
func (h *harness) open(t testing.TB) (*Chat, error) {
	t.Helper()
	hh, err := openHost(&h.host, h.cfg.Hints.Host, h.cfg.Now, &h.err)
	if err != nil {
		return nil, err
	}
	cfg := h.cfg
	cfg.Host = hh
	return New(context.Background(), cfg)
}

// testHints are hints worded as the command line words them, so that
// the tests read the messages a user sees; TestNoSwitchWithoutHints reads
// them without.
func testHints() Hints {
	return Hints{
		Host: host.Hints{
			KeepLocalTools: "set AGENT_GUARD_MCP_STRICT=1",
			LocalToolsWin:  "AGENT_GUARD_MCP_STRICT is set",
			InputRefused:   "unset AGENT_GUARD_INPUT if this is a false alarm",
		},
		AddServer:   `add one with --mcp "<command line>" or --config FILE`,
		Guards:      "set AGENT_GUARD_* variables to turn them on",
		Resume:      func(id string) string { return "resume it later with --session " + id + " or --continue" },
		TurnTimeout: "allow more time with --turn-timeout",
		MaxSteps:    "the limit is --max-steps",
	}
}

func newHarness(t *testing.T, m model.Model, st *store.Store, input string) *harness {
	t.Helper()
	h := &harness{}
	h.host = hostParts{
		Model: m,
		Local: []*agent.Tool{constTool("getOrderStatus", "", `{"status":"已发货"}`)},
		Store: st,
	}
	h.cfg = Config{
		In:    strings.NewReader(input),
		Hints: testHints(),
	}
	h.cfg.Out = &h.out
	h.cfg.Err = &h.err
	return h
}

func (h *harness) run(t *testing.T) {
	t.Helper()
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v\nstderr:\n%s", err, h.err.String())
	}
}

// checkStageOrder fails the test when the stage lines in out go backwards
// in simulate-research-query's order.
func checkStageOrder(t *testing.T, out string) {
	t.Helper()
	stages := []string{"Gathering sources", "Analyzing content", "Synthesizing findings", "Generating report"}
	at := 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "⋯ simulate-research-query working: ") {
			continue
		}
		for i, s := range stages {
			if strings.Contains(line, s) {
				if i < at {
					t.Errorf("stage %q shown after %q:\n%s", s, stages[at], out)
				}
				at = i
			}
		}
	}
}
