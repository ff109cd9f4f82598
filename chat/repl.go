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
	"unicode/utf8"

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

// lineSource picks readline on a terminal and plain line reading otherwise.
func (c *Chat) lineSource() (lineSource, bool, error) {
	if term.IsTerminal(c.cfg.In) {
		src, err := newReadlineSource(c.cfg.In.(*os.File), c.cfg.Out, c.cfg.Err, c.cfg.HistoryFile)
		if err != nil {
			return nil, false, fmt.Errorf("set up the terminal: %w", err)
		}
		return src, true, nil
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
		c.session = c.sessions.newID()
		c.resuming, c.resumed = false, 0
		fmt.Fprintf(out, "Started a new session: %s (earlier messages are no longer sent to the model).\n", c.session)
	case "/tools":
		c.refreshTools(ctx)
		c.printTools(out)
	case "/mcp":
		switch args := strings.Fields(line)[1:]; {
		case len(args) == 0:
			c.refreshTools(ctx)
			c.printServers(out)
		case len(args) <= 2 && slices.Contains([]string{"restart", "enable", "disable"}, strings.ToLower(args[0])):
			name := ""
			if len(args) == 2 {
				name = args[1]
			}
			c.manageServer(ctx, strings.ToLower(args[0]), name)
		default:
			fmt.Fprintln(out, "Usage: /mcp (list the MCP servers), /mcp restart NAME, /mcp enable NAME or /mcp disable NAME")
		}
	case "/help":
		fmt.Fprintln(out, `Commands:
  /tools             list the tools the model can call and where each comes from
  /mcp               list the MCP servers: state (connected, restarting, down,
                     failed, needs login, disabled) and tools
  /mcp restart NAME  restart an MCP server now (also brings back one that is down
                     or failed)
  /mcp disable NAME  stop an MCP server for this chat; its tools leave the table
  /mcp enable NAME   start a disabled MCP server again
  /new               start a new session (the model forgets this conversation)
  /help              show this help
  /exit              leave the chat (Ctrl-D does the same)
A crashed MCP server is restarted on the next call to one of its tools, at most
3 times a minute; after that it is down until /mcp restart.
Ctrl-C during an answer cancels it; Ctrl-C at an empty prompt leaves the chat.
Anything else is a message to the assistant (at most 8000 characters).`)
	default:
		fmt.Fprintf(out, "Unknown command %s; type /help for the list.\n", cmd)
	}
	return false
}

func (c *Chat) printTools(w io.Writer) {
	c.toolsMu.Lock()
	tools, use := c.live.set.Tools(), c.toolUseLocked()
	c.toolsMu.Unlock()
	width := 0
	for _, t := range tools {
		width = max(width, utf8.RuneCountInString(textsafe.Escape(t.Name)))
	}
	fmt.Fprintf(w, "%d %s:\n", len(tools), plural(len(tools), "tool", "tools"))
	for _, t := range tools {
		origin := "local"
		if !t.IsLocal() {
			origin = "MCP server " + textsafe.Escape(t.Origin)
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, textsafe.Escape(t.Name), origin)
	}
	for i, s := range c.cfg.Servers {
		for _, sk := range use[i].skipped {
			fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  (%s from MCP server %s is skipped: %s)", sk.name, s.Name(), sk.why())))
		}
	}
}

// replTurn runs one message in the REPL and reports problems on Err.
func (c *Chat) replTurn(ctx context.Context, text string) {
	obs := &turnObserver{out: &lineWriter{w: c.cfg.Out}, inner: c.cfg.Observer}
	if term.IsTerminal(c.cfg.Err) {
		obs.spin = &spinner{w: c.cfg.Err}
	}
	c.spin.Store(obs.spin)
	defer c.spin.Store(nil)
	tr, err := c.turn(ctx, text, obs, true)
	obs.spin.halt()
	obs.out.endLine()
	switch {
	case errors.Is(err, ErrInterrupted):
		fmt.Fprintln(c.cfg.Err, "^C turn cancelled (press Ctrl-C again at the prompt, or type /exit, to leave)")
		return
	case err != nil:
		fmt.Fprintln(c.cfg.Err, "error:", err)
		return
	}
	if !obs.out.wrote && tr.res != nil {
		// The model did not stream (or said nothing while streaming).
		obs.out.write(tr.res.Text)
		obs.out.endLine()
	}
}

// Answer is the machine-readable result of Ask with JSON output.
type Answer struct {
	Answer  string `json:"answer"`
	Steps   []Step `json:"steps"`
	Model   string `json:"model"`
	Session string `json:"session"`
}

// Step is one tool call of an Answer.
type Step struct {
	Step int    `json:"step"`
	Tool string `json:"tool"`
	// Input is the arguments as the model sent them: JSON when they parse,
	// else the raw text as a string.
	Input  json.RawMessage `json:"input"`
	Output string          `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// Ask answers one question and returns: the reply streams to Out, or with
// asJSON an Answer is written to Out once the run is over. The question is
// stored in the session like a REPL message, so --continue can follow up.
// Errors (including a refused message and ErrInterrupted) are returned for
// the caller to report; nothing but the answer reaches Out.
func (c *Chat) Ask(ctx context.Context, question string, asJSON bool) error {
	question = strings.TrimSpace(question)
	if question == "" {
		return errors.New("the prompt is empty; pass the question with -p \"...\" or on stdin with -p -")
	}
	obs := &turnObserver{out: &lineWriter{w: c.cfg.Out}, inner: c.cfg.Observer}
	if term.IsTerminal(c.cfg.Err) {
		obs.spin = &spinner{w: c.cfg.Err}
	}
	// A confirmation question in one-shot mode reads its answer from
	// stdin as plain lines (the question itself came from -p).
	c.input.use(&plainSource{r: bufio.NewReader(c.cfg.In)})
	c.spin.Store(obs.spin)
	defer c.spin.Store(nil)
	tr, err := c.turn(ctx, question, obs, !asJSON)
	obs.spin.halt()
	if err != nil {
		obs.out.endLine()
		return err
	}
	if !asJSON {
		if !obs.out.wrote {
			obs.out.write(tr.res.Text)
		}
		obs.out.endLine()
		return nil
	}
	a := Answer{Answer: tr.res.Text, Steps: []Step{}, Model: c.cfg.Model.Name(), Session: c.session}
	for _, ev := range tr.steps {
		s := Step{Step: ev.Step, Tool: ev.ToolName, Input: jsonOrString(ev.Input), Output: ev.Output}
		if ev.Err != nil {
			s.Error = ev.Err.Error()
		}
		a.Steps = append(a.Steps, s)
	}
	enc := json.NewEncoder(c.cfg.Out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(a)
}

func jsonOrString(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
