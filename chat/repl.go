package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// Run is the REPL: it writes the banner, then reads lines until /exit, the
// end of input, or Ctrl-C at an empty prompt. Each line is a message, or a
// command when it starts with a slash. A failed turn is reported on Err and
// the chat goes on. Run returns nil on a normal exit; it does not close the
// servers (Close does).
func (c *Chat) Run(ctx context.Context) error {
	src, interactive, err := c.lineSource()
	if err != nil {
		return err
	}
	defer src.close()
	c.input.use(src)
	c.Banner(c.cfg.Out)

	for {
		line, err := c.input.read(ctx, "", c.cfg.Interrupt)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if interactive {
				fmt.Fprintln(c.cfg.Out)
			}
			return nil
		case errors.Is(err, errPromptInterrupt):
			if strings.TrimSpace(line) != "" {
				// Ctrl-C on a typed line discards the line, as shells do.
				continue
			}
			return nil
		case ctx.Err() != nil:
			return nil
		default:
			return fmt.Errorf("read input: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if cmd, ok := command(line); ok {
			if done := c.runCommand(ctx, cmd, line); done {
				return nil
			}
			continue
		}
		c.replTurn(ctx, line)
	}
}

// lineSource picks the line editor on a terminal and plain line reading
// otherwise (or where the editor cannot put the terminal in raw mode).
func (c *Chat) lineSource() (lineSource, bool, error) {
	// The editor draws where the terminal is: on stdout, or on stderr when
	// stdout goes to a file (no escape codes in the file).
	draw := c.cfg.Out
	if !term.IsTerminal(draw) {
		draw = c.cfg.Err
	}
	if term.IsTerminal(c.cfg.In) && term.IsTerminal(draw) {
		src, err := newTermEditor(c.cfg.In.(*os.File), draw, c.cfg.Err, c.cfg.HistoryFile)
		if err == nil {
			src.complete = c.complete
			return src, true, nil
		}
		fmt.Fprintf(c.cfg.Err, "agentapp: warning: no line editing (%v); reading plain lines\n", err)
	}
	return &plainSource{r: bufio.NewReader(c.cfg.In)}, false, nil
}

// command recognises a slash command: a first word that starts with '/'
// and is not a path (so "/etc/hosts?" is still a message).
func command(line string) (string, bool) {
	word, _, _ := strings.Cut(line, " ")
	if !strings.HasPrefix(word, "/") || strings.Count(word, "/") > 1 || len(word) < 2 {
		return "", false
	}
	return strings.ToLower(word), true
}

// runCommand runs a slash command (cmd is its first word, line the whole
// line) and reports whether the chat should end.
func (c *Chat) runCommand(ctx context.Context, cmd, line string) bool {
	out := c.cfg.Out
	switch cmd {
	case "/exit", "/quit":
		return true
	case "/new":
		c.h.EndSession(ctx, c.session, "clear")
		c.session = c.h.Sessions().NewID()
		c.resuming, c.resumed = false, 0
		fmt.Fprintf(out, "Started a new session: %s (earlier messages are no longer sent to the model).\n", c.session)
	case "/tools":
		if args := strings.Fields(line)[1:]; len(args) > 0 {
			c.toolsCommand(ctx, out, args)
			break
		}
		c.refreshTools(ctx)
		c.printTools(out)
		c.printToolSearch(ctx, out)
	case "/mcp":
		switch args := strings.Fields(line)[1:]; {
		case len(args) == 0:
			c.refreshTools(ctx)
			var b strings.Builder
			c.printServers(&b)
			io.WriteString(out, fitWidth(b.String(), termWidth(out)))
		case len(args) <= 2 && slices.Contains([]string{"restart", "enable", "disable"}, strings.ToLower(args[0])):
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			c.manageServer(ctx, strings.ToLower(args[0]), name)
		default:
			fmt.Fprintln(out, "Usage: /mcp (list the MCP servers), /mcp restart NAME, /mcp enable NAME or /mcp disable NAME")
		}
	case "/call":
		c.callCommand(ctx, line)
	case "/usage":
		c.usageCommand(ctx, out)
	case "/hooks":
		c.hooksCommand(out)
	case "/compact":
		c.compactCommand(ctx, out)
	case "/help":
		fmt.Fprintln(out, `Commands:
  /tools             list the tools the model can call and where each comes from
  /tools unload NAME stop offering a tool searchTools loaded in this session
  /mcp               list the MCP servers: state (connected, restarting, down,
                     failed, needs login, disabled) and tools
  /mcp restart NAME  restart an MCP server now (also brings back one that is down
                     or failed)
  /mcp disable NAME  stop an MCP server for this chat; its tools leave the table
  /mcp enable NAME   start a disabled MCP server again
  /call TOOL [JSON]  run a tool (local or MCP) with these arguments, through
                     the guards, and show its result
  /resources [NAME]  list the MCP servers' resources (or one server's)
  /read URI          show a resource; @NAME:URI in a message attaches it for the model
  /prompts           list the MCP servers' prompts
  /NAME:PROMPT a=b   run a server's prompt: its messages go to the model
  /skills            list the MCP servers' skills (server, name, description,
                     whether loaded); the model loads one when it fits
  /skills show SERVER NAME  show a skill's SKILL.md, verified (not to the model)
  /roots             list the roots (directories) offered to each MCP server
  /roots NAME DIR…   offer server NAME these directories instead
  /usage             tokens of the last answer and of this session, and the
                     context window
  /hooks             list the hooks in force and the file each comes from
  /compact           fold this session's older turns into a summary now (the
                     model keeps the summary and the latest turn)
  /new               start a new session (the model forgets this conversation)
  /help              show this help
  /exit              leave the chat (Ctrl-D does the same)
A crashed MCP server is restarted on the next call to one of its tools, at most
3 times a minute; after that it is down until /mcp restart.
Ctrl-C during an answer cancels it; Ctrl-C at an empty prompt leaves the chat.
Anything else is a message to the assistant (at most 8000 characters).`)
	case "/resources", "/read", "/prompts":
		c.catalogCommand(ctx, cmd, line)
	case "/roots":
		c.rootsCommand(out, strings.Fields(line)[1:])
	case "/skills":
		c.skillsCommand(ctx, out, strings.Fields(line)[1:])
	default:
		if c.promptCommand(ctx, line) {
			break
		}
		fmt.Fprintf(out, "Unknown command %s; type /help for the list.\n", cmd)
	}
	return false
}

// printTools is /tools: one line per tool, its name, where it comes from
// (as /mcp names the servers) and the first line of its description, cut
// to the terminal's width (100 columns off a terminal).
func (c *Chat) printTools(w io.Writer) {
	table := c.h.Tools()
	tools, servers, use := table.Current().Tools(), table.Servers(), table.Use()
	cols := termWidth(w)
	if cols <= 0 {
		cols = 100
	}
	nameW, originW := 0, 0
	origins := make([]string, len(tools))
	replaced := map[string]bool{}
	for _, o := range table.Report().Overridden {
		replaced[o.Tool] = true
	}
	for i, t := range tools {
		origins[i] = toolOrigin(t)
		if replaced[t.Name] && !t.IsLocal() {
			origins[i] += ", replaces the local tool"
		}
		nameW = max(nameW, displayWidth(textsafe.Escape(t.Name)))
		originW = max(originW, displayWidth(origins[i]))
	}
	fmt.Fprintf(w, "%d %s:\n", len(tools), plural(len(tools), "tool", "tools"))
	for i, t := range tools {
		name := textsafe.Escape(t.Name)
		line := "  " + name + strings.Repeat(" ", nameW-displayWidth(name)) + "  " + origins[i]
		if d := strings.TrimSpace(firstLineOnly(t.Description)); d != "" {
			line += strings.Repeat(" ", originW-displayWidth(origins[i])) + "  " + textsafe.Escape(d)
		}
		fmt.Fprintln(w, cutToWidth(line, cols-1))
	}
	for i, s := range servers {
		if i >= len(use) {
			break
		}
		for _, sk := range use[i].Skipped {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  (%s from MCP server %s is skipped: %s)", sk.Name, s.Name(), sk.Why())))
		}
	}
}

// toolOrigin says where a tool comes from in the words of /mcp: "local",
// "MCP server NAME", or, for the resource tools that read every server's
// resources, "MCP resources" (no server is called mcp-resources).
func toolOrigin(t *agent.Tool) string {
	switch {
	case t.IsLocal():
		return "local"
	case t.Origin == host.ResourceToolOrigin:
		return "MCP resources"
	case t.Origin == host.SkillToolOrigin:
		return "MCP skills"
	}
	return "MCP server " + textsafe.Escape(t.Origin)
}

func firstLineOnly(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// cutToWidth cuts s to at most cols terminal columns, marking a cut with
// "…"; wide characters are counted as the two columns they take.
func cutToWidth(s string, cols int) string {
	if cols < 10 || displayWidth(s) <= cols {
		return s
	}
	var b strings.Builder
	used := 0
	for _, cl := range clusters(s) {
		cw := clusterWidth(cl)
		if used+cw > cols-1 {
			break
		}
		b.WriteString(cl)
		used += cw
	}
	return b.String() + "…"
}

// replTurn runs one message in the REPL and reports problems on Err.
func (c *Chat) replTurn(ctx context.Context, text string) {
	c.replRun(ctx, func(obs *turnObserver) (turnResult, error) { return c.turn(ctx, text, obs, true) })
}

// replRun runs one turn in the REPL (a message, or a server's prompt) and
// reports problems on Err.
func (c *Chat) replRun(ctx context.Context, run func(*turnObserver) (turnResult, error)) {
	obs := c.newTurnObserver()
	if term.IsTerminal(c.cfg.Err) {
		obs.spin = &spinner{w: c.cfg.Err}
	}
	obs.activity = &activity{w: c.cfg.Err, st: c.style(c.cfg.Err)}
	c.spin.Store(obs.spin)
	defer c.spin.Store(nil)
	c.obs.Store(obs)
	defer c.obs.Store(nil)
	tr, err := run(obs)
	obs.spin.halt()
	obs.out.endLine()
	switch {
	case errors.Is(err, ErrInterrupted):
		obs.cancelOpen()
		fmt.Fprintln(c.cfg.Err, "^C turn cancelled (press Ctrl-C again at the prompt, or type /exit, to leave)")
		return
	case err != nil:
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", err)
		return
	}
	if !obs.out.wrote && tr.res != nil {
		// The model did not stream (or said nothing while streaming).
		obs.out.write(tr.res.Answer)
		obs.out.endLine()
	}
	if tr.res != nil {
		printSources(c.cfg.Out, c.style(c.cfg.Out), tr.res.Sources)
		c.lastUsage = &tr.res.Usage
	}
	// A blank line ends the turn, so each question and its answer stand
	// apart from the next.
	fmt.Fprintln(c.cfg.Out)
}

// Ask answers one question: the reply streams to Out, or with asJSON an
// Answer is written to Out once the run is over. It is AskAs with
// OutputText or OutputJSON, except that a refused tool call is not an
// error: the answer, which says so, is the result.
func (c *Chat) Ask(ctx context.Context, question string, asJSON bool) error {
	format := OutputText
	if asJSON {
		format = OutputJSON
	}
	err := c.AskAs(ctx, question, format)
	var refused *RefusedError
	if errors.As(err, &refused) {
		return nil
	}
	return err
}

// AskAs answers one question and writes the result to Out in format. The
// question is stored in the session like a REPL message, so --continue can
// follow up. Errors (including a refused message and ErrInterrupted) are
// returned for the caller to report; in the JSON formats they are also
// written to Out, as the Answer's error or an error event, so a script
// reads every outcome from one stream. When a guard refused one of the
// turn's tool calls the answer is written and a *RefusedError returned.
func (c *Chat) AskAs(ctx context.Context, question string, format OutputFormat) error {
	question = strings.TrimSpace(question)
	if question == "" {
		return errors.New("the prompt is empty; pass the question with -p \"...\" or on stdin with -p -")
	}
	obs := c.newTurnObserver()
	if term.IsTerminal(c.cfg.Err) {
		obs.spin = &spinner{w: c.cfg.Err}
		if format == OutputText {
			obs.activity = &activity{w: c.cfg.Err, st: c.style(c.cfg.Err)}
		}
	}
	if format == OutputStreamJSON {
		obs.sink = newEventSink(c.cfg.Out)
		obs.sink.emit(Event{Type: "session", Session: c.session, Model: c.h.Model().Name(), Unavailable: c.unavailable()})
	}
	// A confirmation question in one-shot mode reads its answer from
	// stdin as plain lines (the question itself came from -p).
	c.input.use(&plainSource{r: bufio.NewReader(c.cfg.In)})
	c.spin.Store(obs.spin)
	defer c.spin.Store(nil)
	c.obs.Store(obs)
	defer c.obs.Store(nil)
	tr, err := c.turn(ctx, question, obs, format != OutputJSON)
	obs.spin.halt()
	obs.out.endLine()
	if errors.Is(err, ErrInterrupted) {
		obs.cancelOpen()
	}
	text, srcs := "", []host.Source{}
	var usage *host.Usage
	if tr.res != nil && err == nil {
		text, srcs, usage = tr.res.Answer, tr.res.Sources, &tr.res.Usage
	}
	switch format {
	case OutputText:
		if err != nil {
			return err
		}
		if !obs.out.wrote {
			obs.out.write(text)
			obs.out.endLine()
		}
		printSources(c.cfg.Out, style{}, srcs)
	case OutputStreamJSON:
		if err != nil {
			obs.sink.emit(Event{Type: "error", Error: err.Error()})
			return err
		}
		obs.sink.emit(Event{Type: "done", Answer: &text, Sources: srcs, Usage: usage})
	case OutputJSON:
		a := Answer{Answer: text, Steps: []Step{}, Sources: srcs, Model: c.h.Model().Name(), Session: c.session, Unavailable: c.unavailable()}
		for _, ev := range tr.steps() {
			a.Steps = append(a.Steps, stepOf(ev, obs.call(ev.CallID)))
		}
		a.Usage = usage
		if err != nil {
			a.Error = err.Error()
		}
		enc := json.NewEncoder(c.cfg.Out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if werr := enc.Encode(a); werr != nil && err == nil {
			return werr
		}
		if err != nil {
			return err
		}
	}
	return refusedIn(tr.steps())
}

// refusedIn returns a *RefusedError naming the tools whose calls a guard
// refused, or nil.
func refusedIn(steps []agent.StepEvent) error {
	var tools []string
	for _, ev := range steps {
		if _, ok := denial(ev.Output); ok && ev.Err == nil && !slices.Contains(tools, ev.ToolName) {
			tools = append(tools, ev.ToolName)
		}
	}
	if len(tools) == 0 {
		return nil
	}
	return &RefusedError{Tools: tools}
}
