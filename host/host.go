// Package host is the part of agentapp that every front end shares: it
// opens what an assistant needs (the MCP server configs and their
// approvals, the guards, the store, the audit trail, the local tools, the
// servers themselves), keeps the live tool table, stores the sessions,
// runs a turn and reports its steps as one stream of events, and closes
// every server.
//
// The terminal (package chat), the web page, the chat API and the
// OpenAI-compatible endpoint (package web) are front ends over one Host:
// what a turn offers the model, how a clash of tool names is settled,
// which sources an answer cites and how they are written are decided here
// once. The host knows no domain: the tools and the system prompt come in
// through Options (package assistant supplies agentapp's).
package host

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/hooks"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/telemetry"
)

// Limits of a conversation.
const (
	// MaxMessageRunes is the longest user message accepted, in characters.
	// Longer ones are refused before anything is stored or sent.
	MaxMessageRunes = 8000
	// DefaultTurnTimeout bounds one whole turn (every model call and tool
	// call of it); streaming replies are not cut by a per-request timeout.
	DefaultTurnTimeout = 2 * time.Minute
)

// config is a host made of parts already open: the model, the local tools,
// the connected servers, the guards and the store. Open builds one from
// Options (the one way to make a host); the package's tests call newHost
// with parts of their own. Model and Store are required; a zero field
// means its default.
type config struct {
	Model model.Model
	// Local are the tools implemented in this process.
	Local []*agent.Tool
	// Servers are connected MCP servers. The host owns them from New on:
	// Close (or a failing New) closes every one.
	Servers []Server
	// Inactive are the configured servers that are not running at the
	// start: they failed to connect, need a login, or are disabled.
	Inactive []Inactive
	// Unapproved are the names of configured servers that do not run and
	// are not listed (project servers nobody approved). The permission
	// rules may name them: a warning, not an error.
	Unapproved []string
	// Connect starts the configured server called name (Table.Enable).
	// Nil means an inactive server stays so.
	Connect func(ctx context.Context, name string) (Server, error)
	// Guards protect the turns from the MCP servers' tools and, with the
	// input guard, from injected user messages; nil guards nothing. Their
	// config decides the merge policy too (MCPStrict). Their confirmer, if
	// any, asks about the tools to confirm when a turn has none of its own.
	Guards *guard.Guards
	// Store holds the sessions.
	Store *store.Store
	// System is the system prompt; empty sends none.
	System string
	// MaxSteps bounds tool rounds per turn; 0 means agent.DefaultMaxSteps.
	MaxSteps int
	// TurnTimeout bounds a whole turn; 0 means DefaultTurnTimeout.
	TurnTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notify receives what the tool table reports while the host runs
	// (clash warnings, changed tool lists); nil logs them to Logger.
	Notify func(Notice)
	// Logger receives what the host reports; nil discards.
	Logger *slog.Logger
	// Tracing starts a span for each turn, under which the loop's model
	// and tool calls and the MCP requests are traced; nil traces a turn
	// only when its context already carries a trace.
	Tracing *telemetry.Tracing
	// Hints name the switches behind some messages (see Hints).
	Hints Hints
	// Results cap the tool results the model sees (results.go); nil
	// means the defaults.
	Results *resultOptions
	// ToolSearch says when MCP tools are deferred behind searchTools
	// (toolsearch.go); nil means auto.
	ToolSearch *ToolSearchOptions
	// Context sizes the model's context window (see ContextOptions).
	Context ContextOptions
	// Sources finds the passages an answer cites among the turn's tool
	// outputs (the composition knows their shape: package assistant's
	// knowledge-base hits); nil finds none.
	Sources func(answer string, toolOutputs []string) []Source
	// Hooks run the config files' hooks (hooks.go); nil runs none.
	Hooks *hooks.Runner
	// Spend caps the tokens and cost of sessions and turns (spend.go).
	Spend Spend
	// Handoff reports whether a tool hands the conversation to a person
	// (the composition knows which: escalateToHuman); a turn in which
	// one succeeded leaves its session waiting (states.go). Nil: none.
	Handoff func(server, tool string) bool

	// closers are closed after the servers by Close, last first: what
	// Open opened (the store, the audit trail).
	closers []func() error
}

// Host is a running host. Create it with Open, run turns with Run, then
// Close.
type Host struct {
	cfg      config
	log      *slog.Logger
	table    *Table
	guards   *guard.Guards // cfg.Guards asking through confirm
	sessions *SessionStore
	results  *resultParts
	search   *searchParts

	closeOnce sync.Once
	closeErr  error

	// Token accounting (plan.go, usage.go).
	window int
	est    *budget.Estimator
	cal    *budget.Calibrator
	tokens tokenCounters
	day    dayCount // spend.go
}

// newHost checks cfg, builds the tool table (reporting the merge warnings
// through cfg.Notify) and prepares the session tables. On error it closes
// cfg.Servers, so no server process outlives a host that did not start.
func newHost(ctx context.Context, cfg config) (h *Host, err error) {
	defer func() {
		if err != nil {
			err = errors.Join(err, closeServers(cfg.Servers), runClosers(cfg.closers))
		}
	}()
	if cfg.Model == nil {
		return nil, errors.New("host: no model")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = DefaultTurnTimeout
	}
	h = &Host{cfg: cfg, log: cfg.Logger}
	h.initContext()
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	notify := cfg.Notify
	if notify == nil {
		notify = func(n Notice) { h.log.Warn(n.Text) }
	}
	h.guards = cfg.Guards.WithConfirmer(&eventConfirmer{h: h})
	if h.sessions, err = OpenSessionStore(ctx, cfg.Store, cfg.Now); err != nil {
		return nil, err
	}
	if err = checkPolicyNames(cfg, notify); err != nil {
		return nil, err
	}
	if h.results, err = newResultParts(ctx, &cfg); err != nil {
		return nil, err
	}
	if h.search, err = newSearchParts(ctx, &cfg, h.log); err != nil {
		return nil, err
	}
	if h.table, err = newTable(ctx, cfg.Local, cfg.Servers, cfg.Inactive, h.guards, notify, cfg.Connect, cfg.Hints); err != nil {
		return nil, err
	}
	return h, nil
}

// checkPolicyNames fails the start when the confirm list or a permission
// rule names a tool or server that nothing configured has
// (guard.Config.CheckNames), and reports the names that may belong to a
// server that is down as warnings.
func checkPolicyNames(cfg config, notify func(Notice)) error {
	k := guard.Known{Running: map[string][]string{}, Down: slices.Clone(cfg.Unapproved)}
	if len(cfg.Servers) > 0 {
		// The table's own tools over the servers' resources, offered
		// whenever a running server has resources (which may change).
		k.Running[ResourceToolOrigin] = []string{"listMcpResources", "readMcpResource"}
		// And over their skills (skills.go).
		k.Running[SkillToolOrigin] = []string{"loadSkill", "readSkillFile", "listSkills"}
	}
	for _, t := range cfg.Local {
		if t != nil {
			k.Local = append(k.Local, t.Name)
		}
	}
	for _, s := range cfg.Servers {
		if sv, ok := s.(Supervised); ok && sv.Status().State != mcpclient.StateConnected {
			k.Down = append(k.Down, s.Name())
			continue
		}
		k.Running[s.Name()] = namedTools(s.Tools())
	}
	for _, in := range cfg.Inactive {
		k.Down = append(k.Down, in.Name)
	}
	warnings, err := cfg.Guards.Config().CheckNames(k)
	for _, w := range warnings {
		notify(Notice{Warning: true, Text: w})
	}
	return err
}

// Close closes every running MCP server at once (closeServers), then what Open
// opened; the errors are joined. It is safe to call more than once.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		h.closeErr = errors.Join(h.table.close(), h.sessions.s.closeStmts(), runClosers(h.cfg.closers))
	})
	return h.closeErr
}

func runClosers(closers []func() error) error {
	var errs []error
	for i := len(closers) - 1; i >= 0; i-- {
		errs = append(errs, closers[i]())
	}
	return errors.Join(errs...)
}

// Sessions are the stored conversations.
func (h *Host) Sessions() *SessionStore { return h.sessions }

// Tools is the live tool table.
func (h *Host) Tools() *Table { return h.table }

// Model is the model the turns use.
func (h *Host) Model() model.Model { return h.cfg.Model }

// Guards are the guards the turns apply, asking through the host (so a
// confirmation is reported as events of its turn).
func (h *Host) Guards() *guard.Guards { return h.guards }

// Store is the store of the sessions.
func (h *Host) Store() *store.Store { return h.cfg.Store }

// TurnTimeout is the bound of a whole turn.
func (h *Host) TurnTimeout() time.Duration { return h.cfg.TurnTimeout }

// eventConfirmer is the confirmer of the host's guards: it reports the
// question and the answer as events of the turn that asks, and leaves the
// asking to the turn's confirmer (Turn.Confirmer, or the one a direct call
// was given), else to the one the options gave.
type eventConfirmer struct{ h *Host }

func (e *eventConfirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	t := turnFrom(ctx)
	t.emit(Event{Kind: EventApprovalAsked, Approval: &Approval{Request: req}})
	d := guard.Decision{Reason: "no confirmer is configured, so nobody could approve the call"}
	var c guard.Confirmer
	if t != nil {
		c = t.confirmer
	} else if cc, ok := ctx.Value(callConfirmer{}).(guard.Confirmer); ok {
		c = cc
	}
	if c == nil {
		c = e.h.cfg.Guards.Confirmer()
	}
	if why, ok := ctx.Value(hookAllowed{}).(string); ok {
		// A PreToolUse hook answered for the user (hooks.go).
		if why == "" {
			why = "no reason given"
		}
		d = guard.Decision{Approved: true, Reason: "a PreToolUse hook allowed it: " + why}
	} else if hd, ok := e.h.permissionHooks(ctx, req); ok {
		d = hd
	} else if c != nil {
		d = c.Confirm(ctx, req)
	}
	t.emit(Event{Kind: EventApprovalAnswered, Approval: &Approval{Request: req, Decision: d}})
	return d
}
