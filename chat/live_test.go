package chat

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
)

// liveServer is a supervised server stand-in whose tool list and state the
// test changes.
type liveServer struct {
	fakeServer
	lmu      sync.Mutex
	gen      uint64
	state    mcpclient.ServerState
	detail   string
	restarts int
}

func newLiveServer(name string, tools ...*agent.Tool) *liveServer {
	return &liveServer{fakeServer: fakeServer{name: name, tools: tools}, gen: 1, state: mcpclient.StateConnected}
}

func (s *liveServer) Tools() []*agent.Tool {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return append([]*agent.Tool(nil), s.tools...)
}

func (s *liveServer) setTools(tools ...*agent.Tool) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	s.tools = tools
	s.gen++
}

func (s *liveServer) Status() mcpclient.Status {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return mcpclient.Status{State: s.state, Tools: len(s.tools), Detail: s.detail}
}

func (s *liveServer) Restart(context.Context) error {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	s.restarts++
	s.state, s.detail = mcpclient.StateConnected, ""
	s.gen++
	return nil
}

func (s *liveServer) Refresh(context.Context) (uint64, error) {
	s.lmu.Lock()
	defer s.lmu.Unlock()
	return s.gen, nil
}

// TestToolListChangeMidTurn: a server's tool list changes while a turn
// runs (its tool "grow" makes it offer new tools); the model's next request
// offers them, the change is reported on stderr, a new clash with a local
// tool follows the merge policy (override, with its warning), and a new
// clash with another server skips the newcomer with a warning instead of
// ending the chat.
func TestToolListChangeMidTurn(t *testing.T) {
	a := newLiveServer("alpha")
	b := newLiveServer("beta", constTool("shared", "beta", "beta's"))
	grow := testTool("grow", "alpha", func(context.Context) (any, error) {
		a.setTools(
			constTool("getOrderStatus", "alpha", `{"status":"from alpha"}`),
			constTool("shared", "alpha", "alpha's"),
			constTool("extra", "alpha", "extra"),
		)
		return "grown", nil
	})
	a.tools = []*agent.Tool{grow}
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "please call:grow now\ncall:shared\n/tools\n/exit\n")
	h.host.Servers = []host.Server{a, b}
	h.run(t)

	reqs := m.requests
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	first, second := specNames(reqs[0].Tools), specNames(reqs[1].Tools)
	if strings.Contains(first, "extra") || !strings.Contains(second, "extra") || strings.Contains(second, "grow") {
		t.Errorf("request tools: first %s, second %s; want the change in the second", first, second)
	}
	errOut := h.err.String()
	for _, want := range []string{
		"MCP server alpha: tool list changed: added getOrderStatus, extra; removed grow\n", // its shared is skipped
		"warning: MCP tools override local tools of the same name: getOrderStatus (from alpha); set AGENT_GUARD_MCP_STRICT=1 to keep the local tools instead\n",
		`warning: MCP servers "beta" and "alpha" both offer a tool named "shared" now; "beta"'s is kept and the newer one is skipped; set "toolPrefix" on one of them so both can be used` + "\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	out := h.out.String()
	for _, want := range []string{"tool said: grown", "tool said: beta's", "getOrderStatus  MCP server alpha", "shared          MCP server beta"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}

func specNames(specs []model.ToolSpec) string {
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

// TestMCPCommands: /mcp lists every server with its state and tool count
// and says how to bring back one that is down; /mcp restart NAME restarts
// it; unknown names and bad usage are explained.
func TestMCPCommands(t *testing.T) {
	a := newLiveServer("alpha", constTool("one", "alpha", "1"), constTool("two", "alpha", "2"))
	b := newLiveServer("beta", constTool("three", "beta", "3"))
	b.state, b.detail = mcpclient.StateDown, "its process exited (exit status 7)"
	plain := &fakeServer{name: "gamma", tools: []*agent.Tool{constTool("four", "gamma", "4")}}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "/mcp\n/mcp restart beta\n/mcp\n/mcp restart nope\n/mcp restart\n/mcp frobnicate\n/help\n/exit\n")
	h.host.Servers = []host.Server{a, b, plain}
	h.run(t)
	out := h.out.String()
	for _, want := range []string{
		"3 MCP servers:\n  alpha: connected, 2 tools\n  beta: down, 1 tool (its process exited (exit status 7))\n    restart it with /mcp restart beta\n  gamma: connected, 1 tool\n",
		"Restarting MCP server beta…\nMCP server beta: connected, 1 tool\n",
		"3 MCP servers:\n  alpha: connected, 2 tools\n  beta: connected, 1 tool\n  gamma: connected, 1 tool\n",
		"No MCP server is named nope; the servers are: alpha, beta, gamma.\n",
		"Usage: /mcp restart NAME (see /mcp for the names)\n",
		"Usage: /mcp (list the MCP servers), /mcp restart NAME, /mcp enable NAME or /mcp disable NAME\n",
		"/mcp               list the MCP servers",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if b.restarts != 1 || a.restarts != 0 {
		t.Errorf("restarts: alpha %d, beta %d; want 0 and 1", a.restarts, b.restarts)
	}
}

// TestMCPCountsToolsInUse: /mcp counts the tools of each server that are
// in the table, as /tools lists them, and says how many were skipped and
// why: a clash with a local tool under AGENT_GUARD_MCP_STRICT, and a clash
// with another server's tool that appeared while the chat runs. /tools
// lists the same skipped tools.
func TestMCPCountsToolsInUse(t *testing.T) {
	alpha := newLiveServer("alpha")
	grow := testTool("grow", "alpha", func(context.Context) (any, error) {
		alpha.setTools(
			constTool("getOrderStatus", "alpha", "from alpha"),
			constTool("shared", "alpha", "alpha's"),
			constTool("extra", "alpha", "extra"),
		)
		return "grown", nil
	})
	alpha.tools = []*agent.Tool{constTool("getOrderStatus", "alpha", "from alpha"), grow}
	beta := newLiveServer("beta", constTool("shared", "beta", "beta's"))
	gamma := &fakeServer{name: "gamma", tools: []*agent.Tool{
		constTool("createTicket", "gamma", "from gamma"),
		constTool("lookup", "gamma", "x"),
	}}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "/mcp\ncall:grow\n/mcp\n/tools\n/exit\n")
	h.host.Local = append(h.host.Local, constTool("createTicket", "", "local ticket"))
	h.host.Servers = []host.Server{alpha, beta, gamma}
	h.host.Guards = &guard.Config{MCPStrict: true}
	h.run(t)

	out := h.out.String()
	for _, want := range []string{
		"3 MCP servers:\n" +
			"  alpha: connected, 1 tool (1 skipped: name clash with local getOrderStatus)\n" +
			"  beta: connected, 1 tool\n" +
			"  gamma: connected, 1 tool (1 skipped: name clash with local createTicket)\n",
		"tool said: grown",
		"3 MCP servers:\n" +
			"  alpha: connected, 1 tool (2 skipped: name clash with local getOrderStatus; name clash with shared from MCP server beta)\n" +
			"  beta: connected, 1 tool\n" +
			"  gamma: connected, 1 tool (1 skipped: name clash with local createTicket)\n",
		"5 tools:\n" +
			"  getOrderStatus  local             test tool getOrderStatus\n" +
			"  createTicket    local             test tool createTicket\n" +
			"  extra           MCP server alpha  test tool extra\n" +
			"  shared          MCP server beta   test tool shared\n" +
			"  lookup          MCP server gamma  test tool lookup\n" +
			"  (getOrderStatus from MCP server alpha is skipped: the local tool wins because AGENT_GUARD_MCP_STRICT is set)\n" +
			"  (shared from MCP server alpha is skipped: MCP server beta's tool of that name is in use; set \"toolPrefix\" on one of them so both can be used)\n" +
			"  (createTicket from MCP server gamma is skipped: the local tool wins because AGENT_GUARD_MCP_STRICT is set)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
}
