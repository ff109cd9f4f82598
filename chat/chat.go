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
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// Limits of a conversation.
const (
	// HistoryWindow is how many stored messages (the new one included) the
	// model sees: enough for follow-up questions, bounded so that a long
	// session does not grow every request.
	HistoryWindow = 20
	// MaxMessageRunes is the longest user message accepted, in characters.
	// Longer ones are refused before anything is stored or sent.
	MaxMessageRunes = 8000
	// DefaultTurnTimeout bounds one whole turn (every model call and tool
	// call of it); streaming replies are not cut by a per-request timeout.
	DefaultTurnTimeout = 2 * time.Minute
)

// Config is everything a chat needs. Model, Store, In, Out and Err are
// required.
type Config struct {
	Model model.Model
	// ModelInfo explains, in the banner, which model this is and how to
	// switch (e.g. that the offline model is used because no key is set).
	ModelInfo string
	// Local are the tools implemented in this process.
	Local []*agent.Tool
	// Servers are connected MCP servers. The chat owns them from New on:
	// Close (or a failing New) closes every one.
	Servers []Server
	// Inactive are the configured servers that are not running at the
	// start: they failed to connect, need a login, or are disabled. The
	// banner and /mcp list them with their state and reason.
	Inactive []Inactive
	// Connect starts the configured server called name, for /mcp enable
	// and /mcp restart of a server that is not running. Nil means such a
	// server stays as it is until the chat is started again.
	Connect func(ctx context.Context, name string) (Server, error)
	// Guards protect the chat from the MCP servers' tools and, with the
	// input guard, from injected user messages; nil guards nothing. Their
	// config also decides the merge policy (MCPStrict), so the environment
	// is read once (guard.FromEnv). When they have no confirmer, the chat
	// adds a TerminalConfirmer that asks on Err and reads the answer
	// through the same line reader as the REPL.
	Guards *guard.Guards
	// Store holds the sessions.
	Store *store.Store

	In  io.Reader
	Out io.Writer
	Err io.Writer
	// Interrupt delivers Ctrl-C (the command line relays SIGINT). During a
	// turn it cancels the turn; at the prompt it ends the chat. Nil means
	// none arrive.
	Interrupt <-chan os.Signal
	// Observer follows each run (the trace).
	Observer agent.Observer

	// System is the system prompt; empty means SystemPrompt.
	System string
	// MaxSteps bounds tool rounds per turn; 0 means agent.DefaultMaxSteps.
	MaxSteps int
	// TurnTimeout bounds a whole turn; 0 means DefaultTurnTimeout.
	TurnTimeout time.Duration

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
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NoColor turns colour off on a terminal too (the command line sets it
	// from NO_COLOR). Output that is not a terminal is never coloured.
	NoColor bool

	// ClientSide, when set, is what the Servers were connected with
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
	cfg      Config
	toolsMu  sync.Mutex
	live     liveTools // the tool table; refreshed before each model call
	sessions *sessions
	guards   *guard.Guards
	input    *lineReader
	inactive []Inactive // configured servers not running; guarded by toolsMu
	// spin is the spinner of the turn in progress, if any, so that a
	// confirmation question can pause it (it would repaint the question).
	spin atomic.Pointer[spinner]
	// What the servers ask of the chat (sampling.go, elicit.go).
	sampler  *ModelSampler
	elicitor *TerminalElicitor
	// local is cfg.Local plus the resource tools (resources.go).
	local []*agent.Tool
	// turnCtx is the context of the turn in progress, if any.
	turnCtx atomic.Pointer[context.Context]
	// sink is the stream-json output of the question in progress, if any,
	// so that confirmation questions are reported in it.
	sink atomic.Pointer[eventSink]
	// obs is the observer of the turn in progress, which times its calls.
	obs atomic.Pointer[turnObserver]

	session  string
	resumed  int  // messages in the session when it was resumed
	resuming bool // the session came from --session or --continue

	closeOnce sync.Once
	closeErr  error
}

// ErrInterrupted is returned by Ask when Ctrl-C cancelled the question.
var ErrInterrupted = errors.New("interrupted")

// New checks cfg, merges the local and MCP tools (writing the merge
// warnings to cfg.Err, one line each), prepares the session tables and
// picks the session. On error it closes cfg.Servers, so no server process
// outlives a chat that did not start.
func New(ctx context.Context, cfg Config) (c *Chat, err error) {
	defer func() {
		if err != nil {
			closeAll(cfg.Servers)
		}
	}()
	switch {
	case cfg.Model == nil:
		return nil, errors.New("chat: no model")
	case cfg.In == nil || cfg.Out == nil || cfg.Err == nil:
		return nil, errors.New("chat: In, Out and Err are required")
	case cfg.SessionID != "" && cfg.Continue:
		return nil, errors.New("use either --session ID or --continue, not both")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.System == "" {
		cfg.System = SystemPrompt
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	c = &Chat{cfg: cfg, input: newLineReader(cfg.Err), inactive: slices.Clone(cfg.Inactive)}
	c.guards = cfg.Guards
	if c.guards != nil && c.guards.Confirmer() == nil {
		interactive := term.IsTerminal(cfg.In) || cfg.assumeTerminal
		asker := newTerminalConfirmer(c.input, c.input.noteWriter(), interactive)
		asker.Timeout = cfg.confirmTimeout
		c.guards = c.guards.WithConfirmer(&pausingConfirmer{inner: asker, spin: &c.spin, sink: &c.sink, obs: &c.obs, now: cfg.Now})
	}
	interactive := term.IsTerminal(cfg.In) || cfg.assumeTerminal
	c.sampler = newModelSampler(cfg.Model, c.input, cfg.Err, interactive, &c.spin)
	c.elicitor = newTerminalElicitor(c.input, cfg.Err, interactive, &c.spin)
	if cfg.ClientSide != nil {
		cfg.ClientSide.chat.Store(c)
	}
	// Generations first: tools read after them are at least as new.
	gens, err := generations(ctx, cfg.Servers)
	if err != nil {
		return nil, err
	}
	// listMcpResources and readMcpResource join the tools the table is
	// built from when a server offers resources; the banner's local tools
	// stay cfg.Local.
	c.local = append(append([]*agent.Tool(nil), cfg.Local...), c.resourceTools(c.guards)...)
	set, report, err := BuildTools(c.local, cfg.Servers, c.guards)
	if err != nil {
		return nil, err
	}
	for _, w := range report.Warnings {
		fmt.Fprintln(cfg.Err, "agentapp: warning:", textsafe.Escape(w))
	}
	c.live = liveTools{set: set, report: report, gens: gens, names: make([][]string, len(cfg.Servers))}
	for i, s := range cfg.Servers {
		c.live.names[i] = namedTools(s.Tools())
	}
	c.live.offered = c.live.names

	if c.sessions, err = openSessions(ctx, cfg.Store, cfg.Now); err != nil {
		return nil, err
	}
	switch {
	case cfg.SessionID != "":
		n, ok, err := c.sessions.count(ctx, cfg.SessionID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w %q in %s; use --continue for the latest session, or leave --session out to start a new one", ErrNoSession, cfg.SessionID, cfg.Store.Path)
		}
		c.session, c.resumed, c.resuming = cfg.SessionID, n, true
	case cfg.Continue:
		id, err := c.sessions.latest(ctx)
		if err != nil {
			return nil, err
		}
		if id == "" {
			fmt.Fprintln(cfg.Err, "agentapp: warning: no earlier chat session to continue; starting a new one")
			c.session = c.sessions.newID()
			break
		}
		n, _, err := c.sessions.count(ctx, id)
		if err != nil {
			return nil, err
		}
		c.session, c.resumed, c.resuming = id, n, true
	default:
		c.session = c.sessions.newID()
	}
	return c, nil
}

// Close closes every MCP server (each stops its process); it is safe to
// call more than once.
func (c *Chat) Close() error {
	c.closeOnce.Do(func() {
		c.toolsMu.Lock()
		servers := c.cfg.Servers
		c.toolsMu.Unlock()
		c.closeErr = closeAll(servers)
	})
	return c.closeErr
}

// Session returns the id of the current session.
func (c *Chat) Session() string { return c.session }

// Tools returns the merged tool table the model is offered now (it changes
// when a server's tool list does).
func (c *Chat) Tools() *agent.ToolSet { return c.currentTools() }

// MergeReport says which tools clashed and what became of them, for the
// current table.
func (c *Chat) MergeReport() MergeReport {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	return c.live.report
}

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
		fmt.Fprintf(w, "Model: %s — %s\n", c.cfg.Model.Name(), c.cfg.ModelInfo)
	} else {
		fmt.Fprintf(w, "Model: %s\n", c.cfg.Model.Name())
	}
	fmt.Fprintf(w, "Local tools: %d (%s)\n", len(c.cfg.Local), strings.Join(toolNames(c.cfg.Local), ", "))
	if len(c.cfg.Servers) == 0 && len(c.inactive) == 0 {
		fmt.Fprintln(w, "MCP servers: none (add one with --mcp \"<command line>\" or --config FILE)")
	}
	// The counts are what is in use, as /mcp and /tools report them: a
	// tool skipped for a name clash is named apart.
	use := c.toolUse()
	for i, s := range c.cfg.Servers {
		u := use[i]
		n := len(u.inUse)
		line := fmt.Sprintf("MCP server %s: connected, %d %s", s.Name(), n, plural(n, "tool", "tools"))
		if n > 0 {
			line += " (" + strings.Join(u.inUse, ", ") + ")"
		}
		if sk := u.skippedText(); sk != "" {
			line += "; " + sk
		}
		fmt.Fprintln(w, textsafe.Escape(line))
	}
	c.printInactive(w, "")
	if active := c.guards.Config().Active(); len(active) > 0 {
		fmt.Fprintf(w, "Guards: %s\n", strings.Join(active, "\n        "))
	} else {
		fmt.Fprintln(w, "Guards: none active (set AGENT_GUARD_* variables to turn them on)")
	}
	if c.resuming {
		fmt.Fprintf(w, "Session: %s (resumed, %d stored %s)\n", c.session, c.resumed, plural(c.resumed, "message", "messages"))
	} else {
		fmt.Fprintf(w, "Session: %s (new; resume it later with --session %s or --continue)\n", c.session, c.session)
	}
	fmt.Fprintln(w, "Type a message. Commands: /tools, /mcp, /new, /help, /exit (or Ctrl-D).")
}

func toolNames(tools []*agent.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return names
}

// namedTools returns the names of the tools that have one, which are the
// tools a table can hold (merge skips the others).
func namedTools(tools []*agent.Tool) []string {
	var names []string
	for _, t := range tools {
		if t != nil && t.Name != "" {
			names = append(names, t.Name)
		}
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
	res         *agent.Result
	steps       []agent.StepEvent
	interrupted bool
}

// TooLongError refuses a message over MaxMessageRunes characters.
type TooLongError struct{ Length int }

func (e *TooLongError) Error() string {
	return fmt.Sprintf("message refused: it is %d characters long and the limit is %d; shorten it or split it into several messages (nothing was sent or stored)", e.Length, MaxMessageRunes)
}

// InputRefusedError is a user message the input guard refused
// (AGENT_GUARD_INPUT). It wraps the guard's error, which names the pattern
// and matches guard.ErrInputRefused.
type InputRefusedError struct{ Err error }

func (e *InputRefusedError) Error() string {
	return e.Err.Error() + "; nothing was sent to the model or stored. Rephrase the message, or unset " + guard.EnvInput + " if this is a false alarm"
}

func (e *InputRefusedError) Unwrap() error { return e.Err }

// turn runs one user message through the loop: it checks the length,
// reads the session window, runs with a whole-turn deadline that Ctrl-C
// cancels, and stores the turn when it succeeded. A failed or cancelled
// turn stores nothing, so the conversation never keeps half a tool
// exchange. onText, when set, streams the reply.
func (c *Chat) turn(ctx context.Context, text string, obs *turnObserver, stream bool) (turnResult, error) {
	var tr turnResult
	if n := utf8.RuneCountInString(text); n > MaxMessageRunes {
		return tr, &TooLongError{Length: n}
	}
	if err := c.guards.CheckUserMessage(text); err != nil {
		return tr, &InputRefusedError{Err: err}
	}
	// @SERVER:URI references: the resources' text goes with the message,
	// fenced as data (resources.go).
	extra, err := c.attachments(ctx, text)
	if err != nil {
		return tr, err
	}
	return c.turnMessages(ctx, []model.Message{{Role: model.RoleUser, Content: text + extra}}, obs, stream)
}

// turnMessages runs the messages the user sends (one typed message, or a
// server prompt's messages) through the loop, like turn.
func (c *Chat) turnMessages(ctx context.Context, added []model.Message, obs *turnObserver, stream bool) (turnResult, error) {
	var tr turnResult
	history, err := c.sessions.window(ctx, c.session, max(HistoryWindow-len(added), 1))
	if err != nil {
		return tr, err
	}
	msgs := append(history, added...)

	turnCtx, cancel := context.WithTimeout(ctx, c.cfg.TurnTimeout)
	defer cancel()
	turnCtx = agent.WithSession(turnCtx, c.session)
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

	opts := agent.Options{
		Model:    c.cfg.Model,
		Messages: msgs,
		Tools:    c.currentTools(),
		Refresh:  c.refreshTools,
		System:   c.cfg.System,
		MaxSteps: c.cfg.MaxSteps,
		OnStep:   func(ev agent.StepEvent) { tr.steps = append(tr.steps, ev) },
		Observer: obs,
	}
	if stream {
		opts.OnText = obs.text
	}
	res, err := agent.Run(turnCtx, opts)
	close(stop)
	tr.interrupted = <-watched
	tr.res = res
	if err != nil {
		switch {
		case tr.interrupted:
			return tr, ErrInterrupted
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			return tr, fmt.Errorf("the turn took longer than %v and was stopped; ask again, or allow more time with --turn-timeout", c.cfg.TurnTimeout)
		case errors.Is(err, agent.ErrMaxSteps):
			return tr, fmt.Errorf("%w (the limit is --max-steps)", err)
		case ctx.Err() != nil:
			return tr, ctx.Err()
		}
		msg := "model " + c.cfg.Model.Name() + " failed: " + err.Error()
		if c.cfg.ErrorHint != nil {
			if h := c.cfg.ErrorHint(err); h != "" {
				msg += "\n" + h
			}
		}
		return tr, &ModelError{Msg: msg, Err: err}
	}
	stored := append(append([]model.Message(nil), added...), res.Messages[len(msgs):]...)
	if err := c.sessions.appendMessages(ctx, c.session, stored); err != nil {
		return tr, err
	}
	return tr, nil
}

// ModelError is a model call that failed, with what to check.
type ModelError struct {
	Msg string
	Err error
}

func (e *ModelError) Error() string { return e.Msg }
func (e *ModelError) Unwrap() error { return e.Err }
