package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
)

// loginError is what an OAuth client returns for a server that wants a
// login: any error with a LoginHint method.
type loginError struct{}

func (loginError) Error() string     { return "401 Unauthorized: the server wants a login" }
func (loginError) LoginHint() string { return "agentapp mcp login crm" }

// TestInactiveServers: a chat starts with a server that failed and one
// that needs a login, shows both with their reason in the banner and in
// /mcp, brings the failed one up with /mcp restart (its tool joins the
// table), and /mcp disable and enable take a running server's tools out
// and back.
func TestInactiveServers(t *testing.T) {
	st := openTestStore(t)
	good := &fakeServer{name: "good", tools: []*agent.Tool{constTool("readGraph", "good", "graph")}}
	flaky := &fakeServer{name: "flaky", tools: []*agent.Tool{constTool("flakyTool", "flaky", "ok")}}
	attempts := 0
	h := newHarness(t, &ruleModel{}, st, strings.Join([]string{
		"/mcp",
		"/mcp restart flaky", // fails again
		"/mcp restart flaky", // connects
		"/tools",
		"/mcp disable good",
		"/tools",
		"/mcp",
		"/mcp enable good",
		"/tools",
		"/mcp restart nosuch",
		"/exit",
	}, "\n")+"\n")
	h.host.Servers = []host.Server{good}
	h.host.Inactive = []host.Inactive{
		{Name: "flaky", Err: errors.New("exec: \"flaky-server\": executable file not found in $PATH")},
		{Name: "crm", Err: &host.ConnectError{Server: "crm", Err: loginError{}}},
		{Name: "parked", Disabled: true, DisabledBy: "agentapp.json"},
	}
	h.host.Connect = func(_ context.Context, name string) (host.Server, error) {
		switch name {
		case "flaky":
			attempts++
			if attempts == 1 {
				return nil, errors.New("still broken")
			}
			return flaky, nil
		case "good":
			return good, nil
		}
		return nil, errors.New("unexpected server " + name)
	}
	h.run(t)
	out, errOut := h.out.String(), h.err.String()
	banner, rest, _ := strings.Cut(out, "Type a message.")
	for _, s := range []string{
		"MCP server good: connected, 1 tool (readGraph)",
		`MCP server flaky: failed: exec: "flaky-server": executable file not found in $PATH`,
		"MCP server crm: needs login: agentapp mcp login crm",
		"MCP server parked: disabled in agentapp.json",
	} {
		if !strings.Contains(banner, s) {
			t.Errorf("banner lacks %q:\n%s", s, banner)
		}
	}
	for _, s := range []string{
		"4 MCP servers:",
		"  flaky: failed: exec:",
		"    try it again with /mcp restart flaky",
		"  crm: needs login: agentapp mcp login crm",
		"MCP server flaky: connected, 1 tool\n",
		"MCP server good disabled for this chat",
		"  good: disabled (enable it with /mcp enable good)",
		"MCP server good: connected, 1 tool\n",
		"No MCP server is named nosuch; the servers are: ",
	} {
		if !strings.Contains(rest, s) {
			t.Errorf("output lacks %q:\n%s", s, rest)
		}
	}
	if !strings.Contains(errOut, "MCP server flaky did not connect: still broken") {
		t.Errorf("stderr lacks the failed restart:\n%s", errOut)
	}
	// The tool lists: flakyTool joins, readGraph leaves and comes back.
	lists := strings.Split(rest, " tools:\n")
	if len(lists) != 4 {
		t.Fatalf("want 3 /tools listings, got %d:\n%s", len(lists)-1, rest)
	}
	has := func(list, tool string) bool { return strings.Contains(strings.SplitN(list, "\n\n", 2)[0], tool) }
	if !has(lists[1], "flakyTool") || !has(lists[1], "readGraph") {
		t.Errorf("after the restart /tools lacks flakyTool or readGraph:\n%s", lists[1])
	}
	if mid, _, _ := strings.Cut(lists[2], "MCP servers:"); strings.Contains(mid, "readGraph") || !strings.Contains(mid, "flakyTool") {
		t.Errorf("after /mcp disable good, /tools still offers readGraph:\n%s", mid)
	}
	if !has(lists[3], "readGraph") {
		t.Errorf("after /mcp enable good, /tools lacks readGraph:\n%s", lists[3])
	}
	if good.closes() != 2 { // disabled once, closed with the chat once
		t.Errorf("good closed %d times, want 2", good.closes())
	}
}

// TestCallCommand: /call runs a local or MCP tool through the guards (an
// allowlist refusal is shown as refused), checks the arguments and names
// the tools when the name is unknown.
func TestCallCommand(t *testing.T) {
	st := openTestStore(t)
	srv := &fakeServer{name: "mem", tools: []*agent.Tool{constTool("read_graph", "mem", `{"entities":[]}`), constTool("delete_all", "mem", "gone")}}
	h := newHarness(t, &ruleModel{}, st, strings.Join([]string{
		`/call getOrderStatus {"orderId":"A-1024"}`,
		"/call read_graph",
		"/call delete_all",
		"/call read_graph [1]",
		"/call nosuch",
		"/exit",
	}, "\n")+"\n")
	h.host.Servers = []host.Server{srv}
	h.host.Guards = &guard.Config{Allowlist: []string{"read_graph"}}
	h.run(t)
	out, errOut := h.out.String(), h.err.String()
	for _, s := range []string{`"status": "已发货"`, `"entities": []`, "The arguments must be one JSON object", "No tool is named nosuch; the tools are: "} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"→ getOrderStatus (local) {\"orderId\":\"A-1024\"}", "✓ getOrderStatus", "→ read_graph (MCP server mem) {}", "✗ delete_all refused: tool delete_all (server mem) is not in AGENT_GUARD_ALLOWLIST"} {
		if !strings.Contains(errOut, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errOut)
		}
	}
	if strings.Contains(out, "gone") {
		t.Errorf("the refused tool ran:\n%s", out)
	}
}

// TestFitWidth: lines wider than the terminal break at spaces (CJK counted
// two columns each) and go on indented; nothing breaks inside a word.
func TestFitWidth(t *testing.T) {
	in := "Model: offline-demo — offline demo model (no OPENAI_API_KEY set)\n短行\n本地工具：订单 工单 转人工 知识库 搜索\n"
	got := fitWidth(in, 24)
	for _, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
		if w := displayWidth(l); w > 24 {
			t.Errorf("line %q is %d columns wide", l, w)
		}
	}
	for _, word := range []string{"offline-demo", "OPENAI_API_KEY", "知识库"} {
		if !strings.Contains(got, word) {
			t.Errorf("%q was broken:\n%s", word, got)
		}
	}
	if !strings.Contains(got, "\n  ") || !strings.Contains(got, "\n短行\n") {
		t.Errorf("continuations not indented or short line changed:\n%s", got)
	}
	if fitWidth(in, 0) != in {
		t.Error("a non-terminal (width 0) must get the text unchanged")
	}
}

// TestDurationLeavesOutTheQuestion: a call's duration is the tool's time,
// not the time the user took to answer its confirmation question. The
// clock moves one second at each reading, so the call (read at its start,
// before and after the question, and at its end) took 3 s of which the
// question took 1 s.
func TestDurationLeavesOutTheQuestion(t *testing.T) {
	st := openTestStore(t)
	srv := &fakeServer{name: "shop", tools: []*agent.Tool{constTool("refund", "shop", "refunded")}}
	h := newHarness(t, &ruleModel{}, st, "y\n")
	h.host.Servers = []host.Server{srv}
	h.host.Guards = &guard.Config{Confirm: []string{"refund"}}
	h.cfg.assumeTerminal = true
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.cfg.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Second)
		return clock
	}
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.AskAs(context.Background(), "please call:refund", OutputJSON); err != nil {
		t.Fatalf("%v\n%s", err, h.err.String())
	}
	var a Answer
	if err := json.Unmarshal(h.out.Bytes(), &a); err != nil || len(a.Steps) != 1 {
		t.Fatalf("%v\n%s", err, h.out.String())
	}
	if a.Steps[0].DurationMS != 2000 {
		t.Errorf("duration %d ms, want 2000 (3 s less the 1 s question)", a.Steps[0].DurationMS)
	}
}

// viewServer is a fakeServer whose tools have _meta (host.ToolMetaServer).
type viewServer struct {
	fakeServer
	meta map[string]map[string]any
}

func (s *viewServer) ToolMeta(name string) map[string]any { return s.meta[name] }

// TestViewOnWeb: a call of a tool that links an MCP Apps view, by /call
// or by the model, shows its text result and one line saying the web
// shows the view; other tools get no such line.
func TestViewOnWeb(t *testing.T) {
	st := openTestStore(t)
	srv := &viewServer{
		fakeServer: fakeServer{name: "apps", tools: []*agent.Tool{constTool("get_time", "apps", `{"time":"12:00"}`), constTool("plain", "apps", "plain result")}},
		meta:       map[string]map[string]any{"get_time": {"ui": map[string]any{"resourceUri": "ui://apps/clock.html"}}},
	}
	h := newHarness(t, &ruleModel{}, st, "/call get_time\n/call plain\nplease call:get_time now\ncall:plain\n/exit\n")
	h.host.Servers = []host.Server{srv}
	h.run(t)
	out, errOut := h.out.String(), h.err.String()
	if !strings.Contains(out, `"time": "12:00"`) || !strings.Contains(out, "plain result") {
		t.Errorf("stdout lacks the text results:\n%s", out)
	}
	if n := strings.Count(errOut, "has an interactive view; agentapp web shows it"); n != 2 || !strings.Contains(errOut, "get_time has an interactive view") {
		t.Errorf("want a view line for each call of get_time (/call and the model's):\n%s", errOut)
	}
}
