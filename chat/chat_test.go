package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
)

func TestREPLPipedBannerCommandsAndTurns(t *testing.T) {
	m := &ruleModel{}
	srv := &fakeServer{name: "shop", tools: []*agent.Tool{
		constTool("getOrderStatus", "shop", `{"status":"from shop"}`),
		constTool("searchKnowledge", "shop", "kb"),
	}}
	h := newHarness(t, m, openTestStore(t), "hello\n/tools\n\n   \n/help\n/nope\norder call:getOrderStatus\n/exit\nnot read\n")
	h.host.Servers = []host.Server{srv}
	h.cfg.ModelInfo = "test model; use --model to switch"
	h.host.Guards = &guard.Config{PII: true, AuditLog: "/data/audit.log"}
	h.run(t)

	out, errOut := h.out.String(), h.err.String()
	for _, s := range []string{
		"Model: rule-model — test model; use --model to switch",
		"Local tools: 1 (getOrderStatus replaced by MCP server shop's)",
		"MCP server shop: connected, 2 tools (getOrderStatus, searchKnowledge)",
		"Guards: permissions: ask before MCP tools not declared read-only\n" +
			"        PII: phone numbers, ids and cards masked in MCP output and knowledge-base hits\n" +
			"        injection scan of MCP tool arguments\n" +
			"        audit log: /data/audit.log\n",
		"echo: hello (1 messages)\n",
		// /tools: the MCP tool overrode the local one.
		"2 tools:\n  getOrderStatus   MCP server shop, replaces the local tool  test tool getOrderStatus\n  searchKnowledge  MCP server shop                           test tool searchKnowledge\n",
		"/tools             list the tools",
		"/mcp restart NAME  restart an MCP server now",
		"Unknown command /nope; type /help",
		`tool said: {"status":"from shop"}` + "\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "not read") || m.calls() != 3 {
		t.Errorf("model called %d times (want 3: hello, then the tool round); input after /exit must not be read", m.calls())
	}
	wantWarn := "warning: MCP tools override local tools of the same name: getOrderStatus (from shop)"
	if !strings.Contains(errOut, wantWarn) || strings.Count(errOut, "warning:") != 1 {
		t.Errorf("stderr should have exactly one override warning %q:\n%s", wantWarn, errOut)
	}
	if srv.closes() != 1 {
		t.Errorf("server closed %d times, want once (by Close)", srv.closes())
	}
}

func TestREPLEOFExitsAndLastLineWithoutNewline(t *testing.T) {
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "first\nsecond")
	h.run(t)
	if !strings.Contains(h.out.String(), "echo: second (3 messages)") {
		t.Errorf("the last line without newline was not answered with the history:\n%s", h.out.String())
	}
}

func TestStrictGuardSkipsMCPTool(t *testing.T) {
	m := &ruleModel{}
	srv := &fakeServer{name: "shop", tools: []*agent.Tool{constTool("getOrderStatus", "shop", "from shop")}}
	h := newHarness(t, m, openTestStore(t), "call:getOrderStatus\n/tools\n")
	h.host.Servers = []host.Server{srv}
	h.host.Guards = &guard.Config{MCPStrict: true}
	h.run(t)
	if !strings.Contains(h.out.String(), `tool said: {"status":"已发货"}`) {
		t.Errorf("the local tool did not run:\n%s", h.out.String())
	}
	if !strings.Contains(h.out.String(), "getOrderStatus from MCP server shop is skipped") {
		t.Errorf("/tools does not show the skipped tool:\n%s", h.out.String())
	}
	if !strings.Contains(h.err.String(), "warning: AGENT_GUARD_MCP_STRICT is set, so local tools win: skipped MCP tools getOrderStatus (from shop)") {
		t.Errorf("no strict warning on stderr:\n%s", h.err.String())
	}
}

func TestTooLongMessageRefused(t *testing.T) {
	m := &ruleModel{}
	st := openTestStore(t)
	long := strings.Repeat("长", host.MaxMessageRunes+1) // 8001 characters, 24003 bytes
	ok := strings.Repeat("好", host.MaxMessageRunes)     // exactly at the limit
	h := newHarness(t, m, st, long+"\n"+ok+"\n")
	h.run(t)
	want := fmt.Sprintf("it is %d characters long and the limit is %d", host.MaxMessageRunes+1, host.MaxMessageRunes)
	if !strings.Contains(h.err.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, h.err.String())
	}
	if m.calls() != 1 {
		t.Fatalf("model called %d times, want once (only for the message at the limit)", m.calls())
	}
	if got := m.lastRequest().Messages; len(got) != 1 || got[0].Content != ok {
		t.Errorf("the refused message reached the model: %d messages", len(got))
	}
	var n int
	if err := st.DB.QueryRow(`SELECT COUNT(*) FROM chat_messages WHERE content = ?`, long).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused message stored %d times (err %v)", n, err)
	}

	// One-shot mode refuses it too, as an error.
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var tl *TooLongError
	if err := c.Ask(context.Background(), long, false); !errors.As(err, &tl) || tl.Length != host.MaxMessageRunes+1 {
		t.Errorf("Ask(long) = %v, want a TooLongError with the length", err)
	}
}

func TestSessionWindowResumeAndNew(t *testing.T) {
	st := openTestStore(t)
	m := &ruleModel{}
	// 12 turns: 6 plain (2 messages each) and 6 with a tool (4 messages each).
	var in strings.Builder
	for i := range 12 {
		if i%2 == 0 {
			fmt.Fprintf(&in, "q%d\n", i)
		} else {
			fmt.Fprintf(&in, "q%d call:getOrderStatus\n", i)
		}
	}
	h := newHarness(t, m, st, in.String())
	h.run(t)
	id := sessionFromBanner(t, h.out.String())

	var stored int
	st.DB.QueryRow(`SELECT COUNT(*) FROM chat_messages WHERE session_id = ?`, id).Scan(&stored)
	if stored != 6*2+6*4 {
		t.Errorf("stored %d messages, want %d", stored, 6*2+6*4)
	}

	// Resume by id: the whole session fits the context window, so the
	// model sees all of it, starting at a user message, ending with the
	// new one.
	h2 := newHarness(t, m, st, "again\n")
	h2.cfg.SessionID = id
	h2.run(t)
	if !strings.Contains(h2.out.String(), "Session: "+id+" (resumed, 36 stored messages)") {
		t.Errorf("banner does not show the resumed session:\n%s", h2.out.String())
	}
	msgs := m.lastRequest().Messages
	if len(msgs) != 37 {
		t.Errorf("model saw %d messages, want the 36 stored and the new one", len(msgs))
	}
	if msgs[0].Role != model.RoleUser || msgs[len(msgs)-1].Content != "again" {
		t.Errorf("window starts with %s and ends with %q; want a user message first and the new message last", msgs[0].Role, msgs[len(msgs)-1].Content)
	}
	for i, msg := range msgs {
		if msg.Role == model.RoleTool && (i == 0 || len(msgs[i-1].ToolCalls) == 0 && msgs[i-1].Role != model.RoleTool) {
			t.Errorf("tool result %d is not preceded by its call", i)
		}
	}

	// --continue picks the latest session; /new starts afresh.
	h3 := newHarness(t, m, st, "more\n/new\nfresh\n")
	h3.cfg.Continue = true
	h3.cfg.Now = func() time.Time { return time.Now().Add(time.Hour) }
	h3.run(t)
	if !strings.Contains(h3.out.String(), "Session: "+id+" (resumed") {
		t.Errorf("--continue did not resume %s:\n%s", id, h3.out.String())
	}
	if got := m.lastRequest().Messages; len(got) != 1 || got[0].Content != "fresh" {
		t.Errorf("after /new the model saw %d messages, want only the new one", len(got))
	}
	if !strings.Contains(h3.out.String(), "Started a new session: ") {
		t.Errorf("/new not confirmed:\n%s", h3.out.String())
	}
	newID := strings.Fields(strings.SplitN(h3.out.String(), "Started a new session: ", 2)[1])[0]

	// Now the /new session is the latest.
	h4 := newHarness(t, m, st, "")
	h4.cfg.Continue = true
	h4.run(t)
	if !strings.Contains(h4.out.String(), "Session: "+newID+" (resumed, 2 stored messages)") {
		t.Errorf("--continue did not pick the newest session %s:\n%s", newID, h4.out.String())
	}

	// An unknown id is an error; --session with --continue is too.
	h5 := newHarness(t, m, st, "")
	h5.cfg.SessionID = "nope"
	if _, err := h5.open(t); !errors.Is(err, ErrNoSession) || !strings.Contains(err.Error(), `"nope"`) || strings.Contains(err.Error(), "--") {
		t.Errorf("unknown session: err = %v", err)
	}
	h5.cfg.Continue = true
	if _, err := h5.open(t); err == nil {
		t.Error("--session with --continue: no error")
	}
}

func TestContinueWithoutSessions(t *testing.T) {
	h := newHarness(t, &ruleModel{}, openTestStore(t), "")
	h.cfg.Continue = true
	h.run(t)
	if !strings.Contains(h.err.String(), "no earlier chat session") || !strings.Contains(h.out.String(), "(new;") {
		t.Errorf("--continue on an empty database:\nstdout %s\nstderr %s", h.out.String(), h.err.String())
	}
}

func sessionFromBanner(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "Session: ")
	if !ok {
		t.Fatalf("no session in banner:\n%s", out)
	}
	return strings.Fields(rest)[0]
}

func TestAskJSON(t *testing.T) {
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "")
	h.host.Local = append(h.host.Local, testTool("broken", "", func(context.Context) (any, error) { return nil, errors.New("disk on fire") }))
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ask(context.Background(), "where is it call:getOrderStatus", true); err != nil {
		t.Fatal(err)
	}
	var a Answer
	if err := json.Unmarshal(h.out.Bytes(), &a); err != nil {
		t.Fatalf("stdout is not one JSON answer: %v\n%s", err, h.out.String())
	}
	if a.Model != "rule-model" || a.Answer != `tool said: {"status":"已发货"}` || a.Session != c.Session() {
		t.Errorf("answer = %+v", a)
	}
	if len(a.Steps) != 1 || a.Steps[0].Step != 1 || a.Steps[0].Tool != "getOrderStatus" ||
		compact(a.Steps[0].Input) != `{"q":"x"}` || compact(a.Steps[0].Output) != `{"status":"已发货"}` || a.Steps[0].Error != "" {
		t.Errorf("steps = %+v", a.Steps)
	}

	// A failing tool shows as a step with an error.
	h.out.Reset()
	if err := c.Ask(context.Background(), "call:broken", true); err != nil {
		t.Fatal(err)
	}
	a = Answer{}
	if err := json.Unmarshal(h.out.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Steps) != 1 || a.Steps[0].Error != "disk on fire" || len(a.Steps[0].Output) != 0 {
		t.Errorf("steps = %+v", a.Steps)
	}

	// Plain one-shot prints only the answer.
	h.out.Reset()
	if err := c.Ask(context.Background(), "  hi  ", false); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h.out.String(), "echo: hi (") || strings.Count(h.out.String(), "\n") != 1 {
		t.Errorf("one-shot stdout = %q", h.out.String())
	}
	if err := c.Ask(context.Background(), " \n", false); err == nil || !strings.Contains(err.Error(), "-p") {
		t.Errorf("empty prompt: err = %v", err)
	}
}

func TestInterruptCancelsTurnAndToolThenChatGoesOn(t *testing.T) {
	started := make(chan struct{})
	stopped := make(chan error, 1)
	slow := testTool("slowTool", "", func(ctx context.Context) (any, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return nil, ctx.Err()
	})
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	intr := make(chan os.Signal, 1)
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "")
	h.cfg.In = inR
	h.host.Local = []*agent.Tool{slow}
	h.cfg.Interrupt = intr
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()

	fmt.Fprintln(inW, "call:slowTool")
	<-started
	intr <- os.Interrupt
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Errorf("slow tool's context ended with %v, want canceled", err)
	}
	fmt.Fprintln(inW, "still there?")
	fmt.Fprintln(inW, "/exit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if !strings.Contains(h.err.String(), "^C turn cancelled") {
		t.Errorf("stderr lacks the cancellation note:\n%s", h.err.String())
	}
	// The cancelled turn was not stored: the next turn sees only itself.
	if !strings.Contains(h.out.String(), "echo: still there? (1 messages)") {
		t.Errorf("the chat did not go on after the cancelled turn:\n%s", h.out.String())
	}
}

func TestInterruptAtPromptExits(t *testing.T) {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	defer inW.Close()
	intr := make(chan os.Signal, 1)
	intr <- os.Interrupt
	h := newHarness(t, &ruleModel{}, openTestStore(t), "")
	h.cfg.In = inR
	h.cfg.Interrupt = intr
	h.run(t) // returns although stdin stays open
}

func TestModelErrorsAndMaxSteps(t *testing.T) {
	m := &ruleModel{err: errors.New("401 Unauthorized: token expired (code 1000)")}
	h := newHarness(t, m, openTestStore(t), "hi\n")
	h.cfg.ErrorHint = func(error) string { return "check OPENAI_API_KEY" }
	h.run(t)
	for _, s := range []string{"error: model rule-model failed: 401 Unauthorized: token expired (code 1000)", "check OPENAI_API_KEY"} {
		if !strings.Contains(h.err.String(), s) {
			t.Errorf("stderr lacks %q:\n%s", s, h.err.String())
		}
	}

	// A model that never stops calling tools runs out of steps.
	loop := &loopModel{}
	h2 := newHarness(t, loop, openTestStore(t), "go\n")
	h2.host.MaxSteps = 2
	h2.run(t)
	if !strings.Contains(h2.err.String(), "did not converge within 2 tool rounds") || !strings.Contains(h2.err.String(), "--max-steps") {
		t.Errorf("stderr lacks the max-steps message:\n%s", h2.err.String())
	}
}

// loopModel calls getOrderStatus forever.
type loopModel struct{}

func (loopModel) Name() string { return "loop" }
func (l loopModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return l.Stream(ctx, req, nil)
}
func (loopModel) Stream(context.Context, *model.Request, func(string)) (*model.Response, error) {
	return &model.Response{Message: model.Message{ToolCalls: []model.ToolCall{{ID: "x", Name: "getOrderStatus"}}}}, nil
}

func TestTurnTimeout(t *testing.T) {
	block := testTool("block", "", func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() })
	h := newHarness(t, &ruleModel{}, openTestStore(t), "call:block\n")
	h.host.Local = []*agent.Tool{block}
	h.host.TurnTimeout = time.Millisecond
	h.run(t)
	if !strings.Contains(h.err.String(), "took longer than 1ms") || !strings.Contains(h.err.String(), "--turn-timeout") {
		t.Errorf("stderr lacks the timeout message:\n%s", h.err.String())
	}
}

func TestNewClosesServersOnMergeError(t *testing.T) {
	a := &fakeServer{name: "a", tools: []*agent.Tool{constTool("read", "a", "")}}
	b := &fakeServer{name: "b", tools: []*agent.Tool{constTool("read", "b", ""), constTool("read", "b", "")}}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "")
	h.host.Servers = []host.Server{a, b}
	_, err := h.open(t)
	if err == nil || !strings.Contains(err.Error(), "offered two tools named") {
		t.Fatalf("err = %v, want the misbehaving server's duplicate", err)
	}
	if a.closes() != 1 || b.closes() != 1 {
		t.Errorf("closes = %d, %d; want both servers closed once", a.closes(), b.closes())
	}
}

func TestCloseClosesEveryServerOnce(t *testing.T) {
	a := &fakeServer{name: "a"}
	b := &fakeServer{name: "b"}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "")
	h.host.Servers = []host.Server{a, b}
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Close()
	if a.closes() != 1 || b.closes() != 1 {
		t.Errorf("closes = %d, %d; want 1, 1", a.closes(), b.closes())
	}
}

func TestCommandRecognition(t *testing.T) {
	for line, want := range map[string]string{"/exit": "/exit", "/TOOLS": "/tools", "/new please": "/new", "/x": "/x"} {
		if got, ok := command(line); !ok || got != want {
			t.Errorf("command(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	for _, line := range []string{"/etc/hosts 是什么", "/", "hello /exit", "//"} {
		if _, ok := command(line); ok {
			t.Errorf("command(%q) recognised, want a message", line)
		}
	}
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid JSON: " + string(raw)
	}
	return b.String()
}

// TestServerStringsAreEscaped: what a server named (itself, its tools)
// reaches the terminal escaped, in the banner, /tools and /mcp.
func TestServerStringsAreEscaped(t *testing.T) {
	m := &ruleModel{}
	srv := &fakeServer{name: "evil\x1b[31m", tools: []*agent.Tool{constTool("red\x1b[31m\nforged", "evil\x1b[31m", "x")}}
	h := newHarness(t, m, openTestStore(t), "/tools\n/mcp\n/exit\n")
	h.host.Servers = []host.Server{srv}
	h.run(t)
	if out := h.out.String() + h.err.String(); strings.ContainsAny(out, "\x1b\r") {
		t.Errorf("raw escape in the output:\n%q", out)
	}
	for _, want := range []string{
		`MCP server evil\x1b[31m: connected, 1 tool (red\x1b[31m\nforged)`, // banner
		`red\x1b[31m\nforged  MCP server evil\x1b[31m`,                     // /tools
		`evil\x1b[31m: connected, 1 tool`,                                  // /mcp
	} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, h.out.String())
		}
	}
}

// TestNamelessToolDoesNotStopTheChat: a server's tool without a name is
// skipped with a warning; the chat starts with the others.
func TestNamelessToolDoesNotStopTheChat(t *testing.T) {
	m := &ruleModel{}
	srv := &fakeServer{name: "broken", tools: []*agent.Tool{constTool("", "broken", "x"), constTool("fine", "broken", "x")}}
	h := newHarness(t, m, openTestStore(t), "/exit\n")
	h.host.Servers = []host.Server{srv}
	h.run(t)
	if !strings.Contains(h.out.String(), "MCP server broken: connected, 1 tool (fine)") {
		t.Errorf("banner:\n%s", h.out.String())
	}
	if !strings.Contains(h.err.String(), `warning: MCP server "broken" offered 1 tool without a name; skipped`) {
		t.Errorf("stderr:\n%s", h.err.String())
	}
}

// The chat names no flag or environment variable of its own accord: those
// are the command line's (Config.Hints). Without hints, the banner, /mcp,
// a timed-out turn and a turn out of steps say what happened and no more.
func TestNoSwitchWithoutHints(t *testing.T) {
	block := testTool("block", "", func(ctx context.Context) (any, error) { <-ctx.Done(); return nil, ctx.Err() })
	h := newHarness(t, &ruleModel{}, openTestStore(t), "/mcp\ncall:block\n")
	h.cfg.Hints = Hints{}
	h.host.Local = []*agent.Tool{block}
	h.host.TurnTimeout = time.Millisecond
	h.run(t)

	h2 := newHarness(t, &loopModel{}, openTestStore(t), "go\n")
	h2.cfg.Hints = Hints{}
	h2.host.MaxSteps = 2
	h2.run(t)

	out := h.out.String() + h.err.String() + h2.out.String() + h2.err.String()
	for _, want := range []string{"MCP servers: none\n", "No MCP servers.\n", "Guards: permissions: ask before MCP tools not declared read-only; allow *\n", " (new)\n", "took longer than 1ms and was stopped; ask again\n", "did not converge within 2 tool rounds"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, switchy := range []string{"--", "AGENT_", "OPENAI_"} {
		if strings.Contains(out, switchy) {
			t.Errorf("output names a switch (%q) without hints:\n%s", switchy, out)
		}
	}
}
