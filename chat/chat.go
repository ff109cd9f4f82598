// Package chat is what a user runs every day: the interactive chat (REPL)
// and the one-shot question, over the tool loop with the local tools and
// the tools of any connected MCP servers.
//
// Everything the chat touches is injected through Config (model, tools,
// servers, input and output, database, interrupts), so the whole REPL runs
// in-process in tests; the command line only wires real values in.
//
// Input rule: on a terminal the REPL edits lines with history; when stdin
// is a pipe or file the REPL reads plain lines, one message per line, and
// the slash commands work the same (so a script can drive it). One-shot
// mode (Ask) takes a single prompt, which the command line reads from -p,
// or from the whole of stdin with -p -.
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// DefaultTurnTimeout bounds one whole turn (host.DefaultTurnTimeout).
const DefaultTurnTimeout = host.DefaultTurnTimeout

// Config is everything a chat needs. In, Out and Err are required, and
// either Host or Model and Store.
type Config struct {
	// Host is the host the chat fronts (cmd/agentapp opens it with
	// host.Open); required. The chat owns it from New on: Close, or a
	// failing New, closes it. Its guards protect the chat; when they have
	// no confirmer, the chat asks on Err and reads the answer through the
	// same line reader as the REPL.
	Host *host.Host
	// ModelInfo explains, in the banner, which model this is and how to
	// switch (e.g. that the offline model is used because no key is set).
	ModelInfo string
	// Confirmer, when set, answers the questions about guarded calls
	// instead of the user on the terminal (an embedder's policy, a test).
	Confirmer guard.Confirmer

	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Interrupt delivers Ctrl-C (the command line relays SIGINT). During a
	// turn it cancels the turn; at the prompt it ends the chat. Nil means
	// none arrive.
	Interrupt <-chan os.Signal
	// Observer follows each run (the trace).
	Observer agent.Observer

	// SessionID resumes this session (--session); it must exist.
	SessionID string
	// Continue resumes the most recently used session (--continue), or
	// starts a new one when there is none.
	Continue bool
	// HistoryFile keeps the line-editing history on a terminal; empty
	// means none is kept across chats.
	HistoryFile string
	// ErrorHint returns what to check after a model error (key, base URL,
	// model name); it may return "".
	ErrorHint func(error) string
	// Hints name the command line's switches behind some of the chat's
	// messages; the chat names no flag or environment variable itself.
	Hints Hints
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AllowInProject allows server's tool in this project from now on
	// (cmd/agentapp writes the local scope's permissions) and returns the
	// file written; the approval question offers it when set.
	AllowInProject func(server, tool string) (file string, err error)
	// NoColor turns colour off on a terminal too (the command line sets it
	// from NO_COLOR). Output that is not a terminal is never coloured.
	NoColor bool

	// ClientSide, when set, is what the host's servers were connected with
	// (ClientSide.ConnectOptions): the chat answers their sampling and
	// elicitation requests and shows their progress from New on.
	ClientSide *ClientSide

	// assumeTerminal makes the confirmer ask even though In is not a
	// terminal, so tests can answer confirmations through a pipe.
	assumeTerminal bool
	// confirmTimeout replaces guard.DefaultConfirmTimeout, so tests can
	// let a question time out.
	confirmTimeout time.Duration
}

// Chat is a running chat. Create it with New, use Run or Ask, then Close.
type Chat struct {
	cfg   Config
	h     *host.Host
	local []*agent.Tool // the host's local tools, for the banner
	// confirmer asks about the guarded calls of the chat's turns and
	// /call, pausing the spinner while it asks.
	confirmer guard.Confirmer
	guards    *guard.Guards
	input     *lineReader
	// spin is the spinner of the turn in progress, if any, so that a
	// confirmation question can pause it (it would repaint the question).
	spin atomic.Pointer[spinner]
	// What the servers ask of the chat (sampling.go, elicit.go).
	sampler  *ModelSampler
	elicitor *TerminalElicitor
	// turnCtx is the context of the turn in progress, if any.
	turnCtx atomic.Pointer[context.Context]
	// obs is the observer of the turn in progress, which times its calls.
	obs atomic.Pointer[turnObserver]

	session  string
	resumed  int  // messages in the session when it was resumed
	resuming bool // the session came from --session or --continue
	// lastUsage is the tokens of the REPL's last answered turn (/usage).
	lastUsage *host.Usage

	closeOnce sync.Once
	closeErr  error
}

// ErrInterrupted is returned by Ask when Ctrl-C cancelled the question.
var ErrInterrupted = errors.New("interrupted")

// New checks cfg and picks the session of a chat over cfg.Host. On error
// it closes the host, so no server process outlives a chat that did not
// start.
func New(ctx context.Context, cfg Config) (c *Chat, err error) {
	h := cfg.Host
	if h == nil {
		return nil, errors.New("chat: no host (open one with host.Open)")
	}
	defer func() {
		if err != nil {
			_ = h.Close()
		}
	}()
	switch {
	case cfg.In == nil || cfg.Out == nil || cfg.Err == nil:
		return nil, errors.New("chat: In, Out and Err are required")
	case cfg.SessionID != "" && cfg.Continue:
		return nil, errors.New("chat: SessionID and Continue are both set; resume one session or the latest, not both")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c = &Chat{cfg: cfg, input: newLineReader(cfg.Err)}
	c.h = h
	c.local = c.h.Tools().Local()
	c.guards = c.h.Guards()
	interactive := term.IsTerminal(cfg.In) || cfg.assumeTerminal
	// The chat's turns and calls ask on the terminal, unless cfg names
	// who answers instead.
	inner := cfg.Confirmer
	if inner == nil {
		asker := newTerminalConfirmer(c.input, c.input.noteWriter(), interactive)
		asker.Timeout = cfg.confirmTimeout
		asker.hint = cfg.Hints.Unanswered
		if asker.sessions, err = host.OpenSessionApprovals(ctx, c.h.Store(), cfg.Now); err != nil {
			return nil, err
		}
		asker.project = cfg.AllowInProject
		inner = asker
	}
	c.confirmer = &pausingConfirmer{inner: inner, spin: &c.spin, obs: &c.obs, now: cfg.Now}
	c.sampler = newModelSampler(h.Model(), c.input, cfg.Err, interactive, &c.spin)
	c.elicitor = newTerminalElicitor(c.input, cfg.Err, interactive, &c.spin)
	if cfg.ClientSide != nil {
		cfg.ClientSide.chat.Store(c)
	}

	sessions := c.h.Sessions()
	switch {
	case cfg.SessionID != "":
		n, ok, err := sessions.Count(ctx, cfg.SessionID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w %q in %s", ErrNoSession, cfg.SessionID, h.Store().Path)
		}
		c.session, c.resumed, c.resuming = cfg.SessionID, n, true
	case cfg.Continue:
		id, err := sessions.Latest(ctx)
		if err != nil {
			return nil, err
		}
		if id == "" {
			fmt.Fprintln(cfg.Err, "agentapp: warning: no earlier chat session to continue; starting a new one")
			c.session = sessions.NewID()
			break
		}
		n, _, err := sessions.Count(ctx, id)
		if err != nil {
			return nil, err
		}
		c.session, c.resumed, c.resuming = id, n, true
	default:
		c.session = sessions.NewID()
	}
	return c, nil
}

// ErrNoSession is wrapped by the error for a --session id that is not in
// the database.
var ErrNoSession = host.ErrNoSession

// notice writes what the tool table reports on Err: warnings as
// "agentapp: warning: …", changes of a tool list as they are.
// A turn's spinner is erased first and drawn again after, so the line
// does not run into it.
func (c *Chat) notice(n host.Notice) {
	c.spin.Load().around(func() {
		if n.Warning {
			fmt.Fprintln(c.cfg.Err, "agentapp: warning:", textsafe.Escape(n.Text))
			return
		}
		fmt.Fprintln(c.cfg.Err, textsafe.Escape(n.Text))
	})
}

// Close closes the host: every MCP server (each stops its process); it is
// safe to call more than once.
func (c *Chat) Close() error {
	c.closeOnce.Do(func() { c.closeErr = c.h.Close() })
	return c.closeErr
}

// Host returns the host the chat fronts.
func (c *Chat) Host() *host.Host { return c.h }

// Session returns the id of the current session.
func (c *Chat) Session() string { return c.session }

// Tools returns the merged tool table the model is offered now (it changes
// when a server's tool list does).
func (c *Chat) Tools() *agent.ToolSet { return c.h.Tools().Current() }

// MergeReport says which tools clashed and what became of them, for the
// current table.
func (c *Chat) MergeReport() host.MergeReport { return c.h.Tools().Report() }

// Banner writes what the user needs to know before the first prompt: the
// model and how to switch, the tools, the connected servers, the guards and
// the session. What came from a server (its name, its tools' names) is
// escaped (textsafe), here and in every other line the chat prints.
func (c *Chat) Banner(out io.Writer) {
	// Written whole, then fitted to the terminal: a long line breaks at
	// a space and goes on indented, never in the middle of a word.
	var b strings.Builder
	c.banner(&b)
	io.WriteString(out, fitWidth(b.String(), termWidth(out)))
}

func (c *Chat) banner(w io.Writer) {
	fmt.Fprintln(w, "agentapp chat: customer-service assistant")
	if c.cfg.ModelInfo != "" {
		fmt.Fprintf(w, "Model: %s — %s\n", c.h.Model().Name(), c.cfg.ModelInfo)
	} else {
		fmt.Fprintf(w, "Model: %s\n", c.h.Model().Name())
	}
	fmt.Fprintf(w, "Local tools: %d (%s)\n", len(c.local), textsafe.Escape(strings.Join(localToolNames(c.local, c.h.Tools().Report()), ", ")))
	servers, inactive := c.h.Tools().Servers(), c.h.Tools().Inactive()
	if len(servers) == 0 && len(inactive) == 0 {
		fmt.Fprintln(w, "MCP servers: none"+hintIn(c.cfg.Hints.AddServer))
	}
	// The counts are what is in use, as /mcp and /tools report them: a
	// tool skipped for a name clash is named apart.
	use := c.h.Tools().Use()
	for i, s := range servers {
		if i >= len(use) {
			break
		}
		u := use[i]
		n := len(u.InUse)
		line := fmt.Sprintf("MCP server %s: connected, %d %s", s.Name(), n, plural(n, "tool", "tools"))
		if n > 0 {
			line += " (" + strings.Join(u.InUse, ", ") + ")"
		}
		if sk := u.SkippedText(); sk != "" {
			line += "; " + sk
		}
		fmt.Fprintln(w, textsafe.Escape(line))
	}
	c.printInactive(w, "")
	// Nil guards guard nothing, the permission policy included.
	if active := c.guards.Config().Active(); c.guards != nil && len(active) > 0 {
		fmt.Fprintf(w, "Guards: %s\n", strings.Join(active, "\n        "))
	} else {
		fmt.Fprintln(w, "Guards: none active"+hintIn(c.cfg.Hints.Guards))
	}
	if c.resuming {
		fmt.Fprintf(w, "Session: %s (resumed, %d stored %s)\n", c.session, c.resumed, plural(c.resumed, "message", "messages"))
	} else {
		line := "Session: " + c.session + " (new"
		if c.cfg.Hints.Resume != nil {
			if h := c.cfg.Hints.Resume(c.session); h != "" {
				line += "; " + h
			}
		}
		fmt.Fprintln(w, line+")")
	}
	fmt.Fprintln(w, "Type a message. Commands: /tools, /mcp, /new, /help, /exit (or Ctrl-D).")
}

// localToolNames names the local tools, each one an MCP server's tool
// replaced saying by whose: that tool is the one offered and run.
func localToolNames(tools []*agent.Tool, r host.MergeReport) []string {
	names := toolNames(tools)
	for i, n := range names {
		for _, o := range r.Overridden {
			if o.Tool == n {
				names[i] = n + " replaced by MCP server " + o.Server + "'s"
			}
		}
	}
	return names
}

func toolNames(tools []*agent.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// turnResult is the outcome of one question.
type turnResult struct {
	res         *host.TurnResult
	interrupted bool
}

// The errors of a turn the chat refuses before running it.
type (
	// TooLongError refuses a message over host.MaxMessageRunes characters.
	TooLongError = host.TooLongError
	// InputRefusedError is a user message the input guard refused.
	InputRefusedError = host.InputRefusedError
)

// turn runs one user message through the host: it reads the @SERVER:URI
// resources the message names and runs the turn, which checks the message
// and fences the resources.
func (c *Chat) turn(ctx context.Context, text string, obs *turnObserver, stream bool) (turnResult, error) {
	// @SERVER:URI references: the resources' text goes with the message;
	// the host fences it as data (resources.go).
	atts, err := c.attachments(ctx, text)
	if err != nil {
		return turnResult{}, err
	}
	return c.turnMessages(ctx, host.Turn{Text: text, Attachments: atts}, obs, stream)
}

// turnMessages runs what the user sends (one typed message with its
// attachments, or a server prompt's messages) through the host's turn
// runner, with Ctrl-C cancelling it, and words its failures for the
// terminal.
func (c *Chat) turnMessages(ctx context.Context, t host.Turn, obs *turnObserver, stream bool) (turnResult, error) {
	var tr turnResult
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	// What a server asks during the turn is asked within it: Ctrl-C ends
	// a question of the server's as it ends the turn (sampling.go).
	c.turnCtx.Store(&turnCtx)
	defer c.turnCtx.Store(nil)

	// Ctrl-C during the turn cancels it, tool calls included.
	stop := make(chan struct{})
	watched := make(chan bool, 1)
	go func() {
		select {
		case <-c.cfg.Interrupt:
			cancel()
			watched <- true
		case <-stop:
			watched <- false
		}
	}()
	t.Session, t.Stream, t.OnEvent, t.Confirmer = c.session, stream, obs.event, c.confirmer
	t.FrontEnd = "chat"
	res, err := c.h.Run(turnCtx, t)
	close(stop)
	tr.interrupted = <-watched
	tr.res = res
	if err != nil {
		var timeout *host.TimeoutError
		var modelErr *host.ModelError
		switch {
		case tr.interrupted:
			return tr, ErrInterrupted
		case errors.As(err, &timeout):
			if h := c.cfg.Hints.TurnTimeout; h != "" {
				return tr, fmt.Errorf("%v; ask again, or %s", err, h)
			}
			return tr, fmt.Errorf("%v; ask again", err)
		case errors.Is(err, agent.ErrMaxSteps):
			if h := c.cfg.Hints.MaxSteps; h != "" {
				return tr, fmt.Errorf("%w (%s)", err, h)
			}
			return tr, err
		case errors.As(err, &modelErr):
			msg := err.Error()
			if c.cfg.ErrorHint != nil {
				if h := c.cfg.ErrorHint(modelErr.Err); h != "" {
					msg += "\n" + h
				}
			}
			return tr, &ModelError{Msg: msg, Err: modelErr.Err}
		}
		return tr, err
	}
	return tr, nil
}

// steps are the tool calls of the turn, nil when it did not run.
func (tr turnResult) steps() []agent.StepEvent {
	if tr.res == nil {
		return nil
	}
	return tr.res.Steps
}

// ModelError is a model call that failed, with what to check.
type ModelError struct {
	Msg string
	Err error
}

func (e *ModelError) Error() string { return e.Msg }
func (e *ModelError) Unwrap() error { return e.Err }
