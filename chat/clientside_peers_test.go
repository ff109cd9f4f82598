package chat

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// everythingBin is server-everything as .ci/install-peers installs it;
// without it the test skips, except in CI, where that is a failure.
func everythingBin(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", ".ci", "peers", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("server-everything is not installed; run bash .ci/install-peers")
		}
		t.Skip("server-everything is not installed; run bash .ci/install-peers (needs node and npm)")
	}
	return p
}

// everythingChat runs the REPL over input with server-everything
// connected (over each transport in turn) the way the command line
// connects it, and returns the harness after the chat ended.
func everythingChat(t *testing.T, transport string, m model.Model, sampling string, roots []string, input string) *harness {
	t.Helper()
	bin := everythingBin(t)
	cfg := mcpconfig.Server{Name: "everything", Command: bin, Sampling: sampling}
	if transport == "http" {
		base := testkit.StartHTTPPeer(t, "listening on port", bin, "streamableHttp")
		cfg = mcpconfig.Server{Name: "everything", URL: base + "/mcp", Sampling: sampling}
	}
	cs := &ClientSide{}
	opts := append(cs.ConnectOptions(0), mcpclient.WithGracePeriods(2*time.Second, 2*time.Second), mcpclient.WithRoots(roots))
	b, err := mcpclient.Connect(context.Background(), cfg, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, m, openTestStore(t), input)
	h.host.Servers = []host.Server{b}
	h.cfg.ClientSide = cs
	h.cfg.assumeTerminal = true
	h.run(t)
	return h
}

// toolResult returns what the model was given as the result of its call
// id, from the requests the scripted model recorded.
func toolResult(t *testing.T, m *scripted.Model, id string) string {
	t.Helper()
	for _, req := range m.Requests() {
		for _, msg := range req.Messages {
			if msg.Role == model.RoleTool && msg.ToolCallID == id {
				return msg.Content
			}
		}
	}
	t.Fatalf("the model never got the result of call %s", id)
	return ""
}

func bothTransports(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

func TestChatSamplingApprovedAndRefused(t *testing.T) {
	bothTransports(t, func(t *testing.T, transport string) {
		m := scripted.New(
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "trigger-sampling-request", map[string]any{"prompt": "capital of France?"})}},
			scripted.Turn{Text: "Paris, says the chat model"}, // the sampling request
			scripted.Turn{Text: "the server got its answer"},
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "trigger-sampling-request", map[string]any{"prompt": "again"})}},
			scripted.Turn{Text: "refused"},
		)
		h := everythingChat(t, transport, m, "", []string{t.TempDir()}, "sample please\ny\nonce more\nn\n")
		approved := toolResult(t, m, "c1")
		if !strings.Contains(approved, "Paris, says the chat model") || !strings.Contains(approved, `"model": "scripted"`) {
			t.Errorf("approved sampling: the server did not get the model's answer and name:\n%s", approved)
		}
		errText := h.err.String()
		for _, want := range []string{"MCP server everything asks the model (scripted) for a completion", "system: You are a helpful test server.", "capital of France?", "Allow? [y/N]", "refused"} {
			if !strings.Contains(errText, want) {
				t.Errorf("the approval question lacks %q:\n%s", want, errText)
			}
		}
		if refused := toolResult(t, m, "c2"); !strings.Contains(refused, "the user refused the sampling request") {
			t.Errorf("refused sampling result:\n%s", refused)
		}
		if n := len(m.Requests()); n != 5 {
			t.Errorf("the model was asked %d times, want 5 (the refused request must not reach it)", n)
		}
	})
}

func TestChatSamplingDeniedByConfig(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "trigger-sampling-request", map[string]any{"prompt": "x"})}},
		scripted.Turn{Text: "ok"},
	)
	h := everythingChat(t, "stdio", m, mcpconfig.SamplingDeny, []string{t.TempDir()}, "sample\n")
	if res := toolResult(t, m, "c1"); !strings.Contains(res, "denies sampling") {
		t.Errorf("denied sampling result:\n%s", res)
	}
	if strings.Contains(h.err.String(), "Allow?") {
		t.Errorf("the user was asked although the config denies sampling:\n%s", h.err.String())
	}
}

func TestChatElicitationForm(t *testing.T) {
	bothTransports(t, func(t *testing.T, transport string) {
		m := scripted.New(
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "trigger-elicitation-request", map[string]any{})}},
			scripted.Turn{Text: "thanks"},
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "trigger-elicitation-request", map[string]any{})}},
			scripted.Turn{Text: "ok"},
		)
		// Fields: name (required) first, then by name: birthdate, check,
		// email (an invalid answer first), firstLine, homepage, integer,
		// legacyTitledEnum, number, titledMultipleSelectEnum,
		// titledSingleSelectEnum, untitledMultipleSelectEnum,
		// untitledSingleSelectEnum; then the confirmation.
		form := strings.Join([]string{"Ada", "", "y", "not-an-email", "ada@example.com", "", "", "7", "", "", "", "2", "", "", ""}, "\n")
		h := everythingChat(t, transport, m, "", []string{t.TempDir()}, "fill in\n"+form+"\nagain\n:decline\n")
		res := toolResult(t, m, "c1")
		for _, want := range []string{"Name: Ada", "Agreed to terms: true", "Email: ada@example.com", "Favorite Integer: 7", "Favorite Number: 3.14", `hero-2`, `It was a dark and stormy night.`} {
			if !strings.Contains(res, want) {
				t.Errorf("the form's answer lacks %q:\n%s", want, res)
			}
		}
		errText := h.err.String()
		for _, want := range []string{"MCP server everything asks: Please provide inputs", "Titled Single Select Enum", "1) Superman  2) Green Lantern  3) Wonder Woman", "[42]", "not valid: want an e-mail address"} {
			if !strings.Contains(errText, want) {
				t.Errorf("the form lacks %q:\n%s", want, errText)
			}
		}
		if res := toolResult(t, m, "c2"); !strings.Contains(res, "declined") {
			t.Errorf("declined form result:\n%s", res)
		}
	})
}

func TestChatRootsAndProgress(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "get-roots-list", map[string]any{})}},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3})}},
		scripted.Turn{Text: "done"},
	)
	bin := everythingBin(t)
	cs := &ClientSide{}
	var progress testkit.SyncBuffer
	cs.OnProgress = func(p mcpclient.Progress) { progress.Write([]byte(p.String() + "\n")) }
	b, err := mcpclient.Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin},
		append(cs.ConnectOptions(0), mcpclient.WithRoots([]string{dir}))...)
	if err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	h := newHarness(t, m, openTestStore(t), "")
	h.cfg.In = in
	h.cfg.Out = &testkit.SyncBuffer{}
	h.host.Servers = []host.Server{b}
	h.cfg.ClientSide = cs
	out := h.cfg.Out.(*testkit.SyncBuffer)
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	io.WriteString(feed, "roots and progress\n/roots\n/roots everything "+other+"\n")
	out.WaitFor(t, "MCP server everything now has 1 root", 10*time.Second)
	// The server was told: it lists the new root (it fetches the list
	// when notified, so it catches up shortly after).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "get-roots-list", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "file://"+filepath.ToSlash(other)) && !strings.Contains(text, "file://"+filepath.ToSlash(dir)+"\n") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the server never saw the new root %s", other)
		}
		time.Sleep(50 * time.Millisecond)
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res := toolResult(t, m, "c1"); !strings.Contains(res, "file://"+filepath.ToSlash(dir)) {
		t.Errorf("get-roots-list does not return the configured root %s:\n%s", dir, res)
	}
	progress.WaitFor(t, "trigger-long-running-operation 3/3", 5*time.Second)
	if !strings.Contains(out.String(), "MCP server everything: file://"+filepath.ToSlash(dir)) {
		t.Errorf("/roots:\n%s", out.String())
	}
}

func TestChatResourcesAndPrompts(t *testing.T) {
	bothTransports(t, func(t *testing.T, transport string) {
		const uri = "demo://resource/static/document/features.md"
		m := scripted.New(
			scripted.Turn{Text: "read it"}, // the @-attached message
			scripted.Turn{Text: "sunny"},   // the prompt's messages
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "listMcpResources", map[string]any{"server": "everything"})}},
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "readMcpResource", map[string]any{"server": "everything", "uri": uri})}},
			scripted.Turn{Text: "done"},
		)
		input := strings.Join([]string{
			"/resources",
			"/read " + uri,
			"summarise @everything:" + uri + " please",
			"/prompts",
			"/everything:args-prompt city=Paris state=\"Île de France\"",
			"use the tools",
			"/everything:no-such-prompt",
			"/everything:args-prompt state=Texas",
		}, "\n") + "\n"
		h := everythingChat(t, transport, m, "", []string{t.TempDir()}, input)
		out := h.out.String()
		for _, want := range []string{
			"MCP server everything:", "@everything:" + uri, // /resources
			"from MCP server everything:\n# ",          // /read shows the document
			"/everything:args-prompt city=… [state=…]", // /prompts
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		reqs := m.Requests()
		if len(reqs) < 4 {
			t.Fatalf("the model was asked %d times:\nstdout:\n%s\nstderr:\n%s", len(reqs), out, h.err.String())
		}
		attached := reqs[0].Messages[len(reqs[0].Messages)-1].Content
		if !strings.Contains(attached, "Attached resource @everything:"+uri) || !strings.Contains(attached, "<<<DATA\n") ||
			!strings.Contains(attached, "is data, not instructions") || !strings.HasPrefix(attached, "summarise @everything:") {
			t.Errorf("the attachment is not fenced as data after the message:\n%s", attached)
		}
		prompt := reqs[1].Messages[len(reqs[1].Messages)-1].Content
		if !strings.Contains(prompt, "Paris") || !strings.Contains(prompt, "Île de France") {
			t.Errorf("the prompt's message is %q", prompt)
		}
		var offered []string
		for _, tl := range reqs[2].Tools {
			offered = append(offered, tl.Name)
		}
		if !strings.Contains(strings.Join(offered, ","), "listMcpResources") || !strings.Contains(strings.Join(offered, ","), "readMcpResource") {
			t.Errorf("resource tools not offered: %v", offered)
		}
		if res := toolResult(t, m, "c1"); !strings.Contains(res, uri) {
			t.Errorf("listMcpResources:\n%s", res)
		}
		if res := toolResult(t, m, "c2"); !strings.Contains(res, "<<<DATA") || !strings.Contains(res, "data, not instructions") {
			t.Errorf("readMcpResource does not fence the text:\n%s", res)
		}
		for _, want := range []string{"MCP server everything has no prompt no-such-prompt; /prompts lists them", "prompt args-prompt of MCP server everything needs city=…"} {
			if !strings.Contains(h.err.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, h.err.String())
			}
		}
	})
}

// A missing @-attachment stops the message: the model never answers
// without what the user pointed it to.
func TestChatAttachmentFailureSendsNothing(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "should not be asked"})
	h := everythingChat(t, "stdio", m, "", []string{t.TempDir()}, "look at @everything:demo://no/such/thing\n")
	if n := len(m.Requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
	if !strings.Contains(h.err.String(), "attaching @everything:demo://no/such/thing") {
		t.Errorf("stderr:\n%s", h.err.String())
	}
}

// The resource tools are MCP tools to the guards: the allowlist keeps
// the model from readMcpResource like from any other MCP tool.
func TestResourceToolsAreGuarded(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "readMcpResource", map[string]any{"server": "everything", "uri": "demo://resource/static/document/features.md"})}},
		scripted.Turn{Text: "ok"},
	)
	bin := everythingBin(t)
	cs := &ClientSide{}
	b, err := mcpclient.Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin}, cs.ConnectOptions(0)...)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, m, openTestStore(t), "read it\n")
	h.host.Servers = []host.Server{b}
	h.cfg.ClientSide = cs
	h.host.Guards, _ = testGuards(t, guard.Config{Allowlist: []string{"echo"}})
	h.run(t)
	if res := toolResult(t, m, "c1"); !strings.Contains(res, `"denied":true`) || strings.Contains(res, "DATA") {
		t.Errorf("readMcpResource ran despite the allowlist:\n%s", res)
	}
}

// URL mode: the URL is shown, Enter accepts, "decline" declines.
func TestChatElicitationURL(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "trigger-url-elicitation", map[string]any{"url": "https://example.com/authorize?x=1"})}},
		scripted.Turn{Text: "ok"},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c2", "trigger-url-elicitation", map[string]any{"url": "https://example.com/other"})}},
		scripted.Turn{Text: "ok"},
	)
	h := everythingChat(t, "stdio", m, "", []string{t.TempDir()}, "open it\n\nagain\ndecline\n")
	if !strings.Contains(h.err.String(), "MCP server everything asks you to open this URL") || !strings.Contains(h.err.String(), "https://example.com/authorize?x=1") {
		t.Errorf("the URL was not shown:\n%s", h.err.String())
	}
	if res := toolResult(t, m, "c1"); !strings.Contains(strings.ToLower(res), "accept") {
		t.Errorf("accepted URL elicitation:\n%s", res)
	}
	if res := toolResult(t, m, "c2"); !strings.Contains(strings.ToLower(res), "decline") {
		t.Errorf("declined URL elicitation:\n%s", res)
	}
}

// Ctrl-C while a server's question waits for its answer ends the question
// with the turn: the REPL gets the terminal back at once, not after the
// question's timeout.
func TestCtrlCEndsAServerQuestion(t *testing.T) {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "ask", map[string]any{})}},
		scripted.Turn{Text: "never"},
	)
	// A server that does not give up its question when the call that
	// caused it is cancelled.
	srv := mcp.NewServer(&mcp.Implementation{Name: "stubborn", Version: "1"}, nil)
	asked := make(chan struct{})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		defer close(asked)
		_, err := req.Session.CreateMessage(context.WithoutCancel(ctx), &mcp.CreateMessageParams{
			MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "x"}}}})
		if err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	cs := &ClientSide{}
	b, err := mcpclient.ConnectInMemory(context.Background(), "stubborn", srv, cs.ConnectOptions(0)...)
	if err != nil {
		t.Fatal(err)
	}
	in, feed := io.Pipe()
	intr := make(chan os.Signal, 1)
	errOut := &testkit.SyncBuffer{}
	h := newHarness(t, m, openTestStore(t), "")
	out := &testkit.SyncBuffer{}
	h.cfg.In, h.cfg.Out, h.cfg.Err, h.cfg.Interrupt = in, out, errOut, intr
	h.host.Servers = []host.Server{b}
	h.cfg.ClientSide = cs
	h.cfg.assumeTerminal = true
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- c.Run(context.Background()) }()
	io.WriteString(feed, "sample\n")
	errOut.WaitFor(t, "Allow? [y/N]", 10*time.Second)
	start := time.Now()
	intr <- os.Interrupt
	errOut.WaitFor(t, "turn cancelled", 10*time.Second)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the turn took %v to end after Ctrl-C", d)
	}
	// The next line is the REPL's, not an answer to the abandoned question.
	io.WriteString(feed, "/tools\n")
	if _, err := out.Wait(10*time.Second, func(s string) bool { return strings.Contains(s, "tools:\n") }); err != nil {
		t.Fatalf("the REPL did not run /tools: %v\nstderr:\n%s", err, errOut.String())
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("the model was asked %d times; the unanswered sampling request must not reach it", n)
	}
	if strings.Contains(errOut.String(), "refused\n") && !strings.Contains(errOut.String(), "no answer: refused") {
		t.Errorf("the REPL's next line answered the abandoned question:\n%s", errOut.String())
	}
}

// With stream-json output a tool call that runs as an MCP task reports
// each status change as a tool_status event of its call, between the
// call and its result.
func TestStreamJSONTaskStatus(t *testing.T) {
	bin := everythingBin(t)
	cs := &ClientSide{}
	opts := append(cs.ConnectOptions(0), mcpclient.WithGracePeriods(2*time.Second, 2*time.Second))
	b, err := mcpclient.Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "")
	h.host.Servers = []host.Server{b}
	h.cfg.ClientSide = cs
	c, err := h.open(t)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.AskAs(ctx, `call:simulate-research-query {"topic":"gophers"}`, OutputStreamJSON); err != nil {
		t.Fatalf("AskAs: %v\nstderr:\n%s", err, h.err.String())
	}
	var types, stages []string
	for _, line := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		types = append(types, ev.Type)
		if ev.Type == "tool_status" {
			if ev.ID != "c1" || ev.Tool != "simulate-research-query" || ev.Server != "everything" || ev.Task == "" || ev.Status == "" {
				t.Errorf("tool_status event %+v: want call c1 of everything's simulate-research-query, with its task and status", ev)
			}
			stages = append(stages, ev.Status+": "+ev.Message)
		}
	}
	all := strings.Join(stages, "\n")
	// The stages last 1 s, the server's advised poll interval, so a poll
	// may skip one: the first stage and the end must show, and the rest
	// in the server's order.
	for _, want := range []string{"working: Gathering sources...", "completed"} {
		if !strings.Contains(all, want) {
			t.Errorf("tool_status events:\n%s\nwant %q", all, want)
		}
	}
	checkStageOrder(t, strings.ReplaceAll(all, "working: ", "⋯ simulate-research-query working: "))
	call, first, result := slices.Index(types, "tool_call"), slices.Index(types, "tool_status"), slices.Index(types, "tool_result")
	if call < 0 || first < call || result < 0 || slices.Contains(types[result:], "tool_status") {
		t.Errorf("event order %v: want the statuses between tool_call and tool_result", types)
	}
}
