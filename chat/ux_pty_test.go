//go:build unix

package chat

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPTYCancelledToolLine: Ctrl-C while a tool runs ends the tool's "→"
// line with a ✗ line saying it was cancelled, before the turn's own note.
func TestPTYCancelledToolLine(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	term.send("please call:slowTool now\r")
	term.expect("→ slowTool (local)")
	term.expect("SLOW-STARTED")
	term.send("\x03")
	term.expect("^C turn cancelled")
	term.expect("> ")
	screen := strings.Join(render(term.output()), "\n")
	i, j := strings.Index(screen, "✗ slowTool cancelled after "), strings.Index(screen, "^C turn cancelled")
	if i < 0 || j < i {
		t.Errorf("no \"✗ slowTool cancelled after …\" line before the turn's note:\n%s", screen)
	}
	if strings.Contains(screen, "slowTool failed") {
		t.Errorf("the cancelled call is also reported as failed:\n%s", screen)
	}
	// The same for /call.
	term.send("/call slowTool\r")
	term.expect("SLOW-STARTED")
	term.send("\x03")
	term.expect("slowTool cancelled after ")
	term.expect("> ")
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// ptyCatalogEnv gives the helper chat MCP servers with resources and
// prompts (fakeCatalog): "docs", and "slowdocs" whose listings never
// answer.
const ptyCatalogEnv = "AGENTAPP_CHAT_PTY_CATALOG"

func ptyCatalogs() []host.Server {
	if os.Getenv(ptyCatalogEnv) == "" {
		return nil
	}
	return []host.Server{newDocsCatalog(), &fakeCatalog{fakeServer: fakeServer{name: "slowdocs"}, slow: true}}
}

// fakeCatalog is an MCP server stand-in with resources and prompts.
type fakeCatalog struct {
	fakeServer
	resources map[string]string // uri → text
	prompts   []*mcp.Prompt
	slow      bool // listings wait until their context ends
}

// newDocsCatalog is "docs": two documents, a tool with a long description,
// and a prompt.
func newDocsCatalog() *fakeCatalog {
	lookup := constTool("lookupDoc", "docs", "found")
	lookup.Description = "Looks a document up by title. " + strings.Repeat("It searches every page of the guide and the FAQ. ", 8)
	return &fakeCatalog{
		fakeServer: fakeServer{name: "docs", tools: []*agent.Tool{lookup}},
		resources: map[string]string{
			"file:///guide.md": "# Guide\n" + strings.Repeat("All about the product. ", 60),
			"file:///faq.md":   "# FAQ\nQ: Where is my order?\n",
		},
		prompts: []*mcp.Prompt{{Name: "summarise", Description: "Summarise a topic"}, {Name: "greet"}},
	}
}

func (f *fakeCatalog) OffersResources() bool { return true }
func (f *fakeCatalog) OffersPrompts() bool   { return true }

func (f *fakeCatalog) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	if f.slow {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	var out []*mcp.Resource
	for _, uri := range slices.Sorted(maps.Keys(f.resources)) {
		out = append(out, &mcp.Resource{URI: uri, Name: path.Base(uri), MIMEType: "text/markdown"})
	}
	return out, nil
}

func (f *fakeCatalog) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	text, ok := f.resources[uri]
	if !ok {
		return nil, fmt.Errorf("resource %s not found", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}, nil
}

func (f *fakeCatalog) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	if f.slow {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return f.prompts, nil
}

func (f *fakeCatalog) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "prompt " + name}}}}, nil
}

// TestPTYAttachments: @docs:URI says on a line of its own what it
// attached (server, URI, size); a mistyped server or URI is refused with
// the near names and the message is not sent.
func TestPTYAttachments(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyCatalogEnv+"=1")
	term.expect("Type a message.")
	term.expect("> ")
	term.send("read @docs:file:///faq.md please\r")
	term.expect("Attached file:///faq.md from MCP server docs (28 bytes, text/markdown)")
	term.expect("echo: read @docs:file:///faq.md please")
	term.expect("> ")

	term.send("read @doc:file:///faq.md\r")
	term.expect("@doc:file:///faq.md: no connected MCP server is named doc; did you mean @docs:file:///faq.md? (the message was not sent")
	term.expect("> ")
	term.send("read @docs:file:///fak.md\r")
	term.expect("attaching @docs:file:///fak.md: resource file:///fak.md not found; MCP server docs lists no such resource (did you mean @docs:file:///faq.md?); the message was not sent")
	term.expect("> ")
	// Not references: an e-mail address, a time.
	term.send("mail me@example.com at @10:30\r")
	term.expect("echo: mail me@example.com at @10:30")
	term.expect("> ")
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// TestPTYToolsDescriptions: /tools gives each tool's description on its
// line, cut to the terminal's width, and names no server that /mcp does
// not list (the resource tools belong to no one server).
func TestPTYToolsDescriptions(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyCatalogEnv+"=1")
	term.expect("Type a message.")
	term.expect("> ")
	term.send("/tools\r")
	term.expect("  lookupDoc ")
	term.expect("> ")
	var lines []string
	for _, l := range render(term.output()) {
		if strings.HasPrefix(l, "  ") {
			lines = append(lines, l)
		}
	}
	want := map[string]string{
		"lookupDoc":        "MCP server docs  Looks a document up by title.",
		"listMcpResources": "MCP resources ",
		"getOrderStatus":   "local ",
	}
	for name, w := range want {
		found := false
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				found = true
				if !strings.Contains(l, w) {
					t.Errorf("/tools line of %s is %q, want it to hold %q", name, l, w)
				}
			}
		}
		if !found {
			t.Errorf("/tools lists no %s:\n%s", name, strings.Join(lines, "\n"))
		}
	}
	for _, l := range lines {
		if displayWidth(l) > 159 {
			t.Errorf("a /tools line is %d columns wide on a 160-column terminal: %q", displayWidth(l), l)
		}
		if strings.Contains(l, "mcp-resources") {
			t.Errorf("/tools names a server /mcp does not list: %q", l)
		}
	}
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// TestPTYTabCompletion: Tab completes slash commands, /SERVER:PROMPT and
// @SERVER:URI (server names, then that server's resources); several
// candidates are completed to what they share, then listed; a server that
// does not list its resources in time is named, and the line is kept.
func TestPTYTabCompletion(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyCatalogEnv+"=1")
	term.expect("Type a message.")
	term.expect("> ")
	lastLine := func(want string) {
		t.Helper()
		term.out.Wait(20*time.Second, func(string) bool {
			lines := render(term.output())
			return len(lines) > 0 && lines[len(lines)-1] == want
		})
		if lines := render(term.output()); len(lines) == 0 || lines[len(lines)-1] != want {
			t.Fatalf("the line is %q, want %q", lines[len(lines)-1], want)
		}
	}

	term.send("/he\t")
	lastLine("> /help")
	term.send("\x15/docs:su\t") // Ctrl-U clears the line
	lastLine("> /docs:summarise")
	term.send("\x15/pr\t")
	lastLine("> /prompts")

	term.send("\x15read @d\t")
	lastLine("> read @docs:")
	term.send("fi\t")
	lastLine("> read @docs:file:///")
	term.send("\t") // nothing to add: the candidates are listed
	term.expect("@docs:file:///faq.md  @docs:file:///guide.md")
	lastLine("> read @docs:file:///")
	term.send("f\t")
	lastLine("> read @docs:file:///faq.md")
	term.send("now\r")
	term.expect("Attached file:///faq.md from MCP server docs")
	term.expect("echo: read @docs:file:///faq.md now")
	term.expect("> ")

	// A server that does not answer: named after the bound, line kept.
	term.send("@slowdocs:\t")
	term.expect("MCP server slowdocs did not list its resources within 2s")
	lastLine("> @slowdocs:")
	term.send("\x15/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// TestPTYMultiLinePaste: a bracketed paste of several lines stays several
// lines (each further row under the first, after a continuation indent),
// Alt-Enter adds a line break, the cursor stays exact with wide
// characters on a later row, and Enter sends the lines as one message.
// Typed ahead while a turn runs, Enter still sends (the terminal gives
// it as LF then).
func TestPTYMultiLinePaste(t *testing.T) {
	dir := t.TempDir()
	term := startTerminal(t, dir)
	term.expect("Type a message.")
	term.expect("> ")
	term.send(pasteStart + "第一行 line one\r第二行\rthird" + pasteEnd)
	term.cursorAt("  third", 7)
	term.send("\x1b\r四五") // Alt-Enter, then two wide characters
	term.cursorAt("  四五", 6)
	term.send("\x1b[D") // left over 五
	term.cursorAt("  四五", 4)
	term.send("\x01") // Ctrl-A: the start of the message, on its first row
	term.cursorAt("> 第一行 line one", 2)
	term.send("\r")
	term.expect("四五 (1 messages)")
	term.expect("> ")
	term.screenEndsWith("> 第一行 line one", "  第二行", "  third", "  四五", "echo: 第一行 line one", "第二行", "third", "四五 (1 messages)", "", ">")
	// The history keeps it as one entry, line breaks included.
	term.send("\x1b[A")
	term.cursorAt("  四五", 6)
	term.send("\x15\x15/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	if h := readFile(t, filepath.Join(dir, "history")); h != "第一行 line one\u2028第二行\u2028third\u2028四五\n/exit\n" {
		t.Errorf("history file %q", h)
	}
}

// TestPTYCtrlZGivesTheTerminalBack: Ctrl-Z at the prompt turns bracketed
// paste off and restores the terminal before the job stops, then takes it
// again and draws the line as it was. (The test's chat is an orphaned
// process group, which the kernel does not stop, so it goes on at once.)
func TestPTYCtrlZGivesTheTerminalBack(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	term.send("draft")
	term.expect("draft")
	term.send("\x1a")
	term.expect("\x1b[?2004l")
	term.expect("\x1b[?2004h")
	term.expect("> draft")
	term.send(" kept\r")
	term.expect("echo: draft kept (1 messages)")
	term.expect("> ")
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// ptyAskEnv makes the helper answer this one question (-p) instead of
// running the REPL.
const ptyAskEnv = "AGENTAPP_CHAT_PTY_ASK"

// TestPTYOneShotCancelledToolLine: Ctrl-C during a one-shot question's
// tool call ends the call's line as cancelled too.
func TestPTYOneShotCancelledToolLine(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyAskEnv+"=please call:slowTool now")
	term.expect("→ slowTool (local)")
	term.expect("SLOW-STARTED")
	term.send("\x03")
	term.expect("slowTool cancelled after ")
	term.expect("helper: ")
	if err := term.wait(); err == nil {
		t.Error("the cancelled question exited 0")
	}
}
