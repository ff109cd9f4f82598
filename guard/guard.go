package guard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentapp/agentapp/telemetry"

	"github.com/agentapp/agentapp/agent"
)

// Guards applies a Config: it wraps MCP tools, checks user messages and
// documents, masks text, and records what it refuses. A nil *Guards guards
// nothing. Safe for concurrent use.
type Guards struct {
	cfg       Config
	allow     map[string]bool
	confirm   map[string]bool
	confirmer Confirmer
	audit     *Audit
}

// New returns guards for cfg. confirmer asks the user about the tools in
// cfg.Confirm; when it is nil those tools are always refused, since nobody
// can approve them. audit records refusals and decisions; nil records
// nothing.
func New(cfg Config, confirmer Confirmer, audit *Audit) *Guards {
	g := &Guards{cfg: cfg, confirmer: confirmer, audit: audit}
	if len(cfg.Allowlist) > 0 {
		g.allow = toSet(cfg.Allowlist)
	}
	g.confirm = toSet(cfg.Confirm)
	return g
}

func toSet(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// WithConfirmer returns a copy of g that asks c about the tools in
// Config.Confirm, sharing g's audit log. It exists because the program
// that reads the user's lines (the chat) is created after the guards that
// its local tools need: the chat adds its terminal confirmer, reading from
// its own line reader, when it starts. A nil g stays nil.
func (g *Guards) WithConfirmer(c Confirmer) *Guards {
	if g == nil {
		return nil
	}
	cp := *g
	cp.confirmer = c
	return &cp
}

// Confirmer returns the confirmer asking about the tools in Config.Confirm;
// nil when none is set (those tools are then refused).
func (g *Guards) Confirmer() Confirmer {
	if g == nil {
		return nil
	}
	return g.confirmer
}

// Audit returns the audit log the guards write to; nil when none.
func (g *Guards) Audit() *Audit {
	if g == nil {
		return nil
	}
	return g.audit
}

// Config returns the configuration the guards apply.
func (g *Guards) Config() Config {
	if g == nil {
		return Config{}
	}
	return g.cfg
}

// Denial is the result a refused call returns to the model instead of the
// server's output.
type Denial struct {
	Denied bool   `json:"denied"`
	Reason string `json:"reason"`
}

// denied encodes a refusal as the tool's output. It is a result, not an
// error: the model should read it as the answer of this call and explain it
// to the user, not retry as after a failure.
func denied(reason string) json.RawMessage {
	b, _ := json.Marshal(Denial{Denied: true, Reason: reason}) // a struct of a bool and a string always encodes
	return b
}

// Wrap returns t guarded for one call as: allowlist, injection scan of the
// arguments, permission policy (deny, ask, allow), the call, PII mask of
// the output. Every tool from an MCP server (t.Origin != "") is wrapped,
// since the permission policy always applies to them; the allowlist, the
// scan and the mask only when their switches are on. A local tool is
// wrapped only when AGENT_GUARD_CONFIRM names it, and then only asks: it
// is this program's own code, which the other guards are not about. The
// wrapper is a new Tool with the same fields and a new Execute; t is never
// changed.
//
// A refusal returns {"denied": true, "reason": "..."} as the tool's result
// and never calls t.Execute. The per-server allowedTools of the
// configuration are applied by the bridge before tools get here; the
// allowlist here is the global one from AGENT_GUARD_ALLOWLIST.
func Wrap(t *agent.Tool, g *Guards) *agent.Tool {
	if t == nil || g == nil {
		return t
	}
	if t.IsLocal() {
		if !g.confirm[t.Name] {
			return t
		}
		inner := t.Execute
		name := t.Name
		return withExecute(t, func(ctx context.Context, args json.RawMessage) (any, error) {
			if d, ok := g.ask(ctx, ConfirmRequest{Tool: name, Args: args, Why: EnvConfirm + " names it", Cause: AskConfirmList}); !ok {
				return d, nil
			}
			if inner == nil {
				return nil, fmt.Errorf("tool %s has no Execute function", name)
			}
			return inner(ctx, args)
		})
	}
	inner, ready := t.Execute, t.Ready
	name, server, readOnly := t.Name, t.Origin, t.ReadOnly
	return withExecute(t, func(ctx context.Context, args json.RawMessage) (any, error) {
		if g.allow != nil && !g.allow[name] {
			telemetry.GuardDecision(ctx, "allowlist", telemetry.GuardDenied, "not in "+EnvAllowlist)
			g.audit.Record(Event{Event: EventAllowlistDenied, Tool: name, Server: server,
				Reason: "not in " + EnvAllowlist, Args: g.previewForAudit(args)})
			return denied(fmt.Sprintf("%s is not in %s, so it was not called. Tell the user this tool is blocked by configuration.",
				describeCall(name, server), EnvAllowlist)), nil
		}
		if g.cfg.Any() {
			if f, ok := ScanArgs(args); ok {
				telemetry.GuardDecision(ctx, "injection", telemetry.GuardDenied, "prompt-injection pattern "+f.Pattern)
				g.audit.Record(Event{Event: EventInjectionDenied, Tool: name, Server: server,
					Reason: "prompt-injection pattern in the arguments", Pattern: f.Pattern, Match: f.Match, Args: g.previewForAudit(args)})
				return denied(fmt.Sprintf("the arguments for %s contain a prompt-injection pattern (%s), so it was not called.",
					describeCall(name, server), f.Pattern)), nil
			}
		}
		v := g.cfg.Permissions.Decide(server, name, readOnly, g.confirm[name])
		switch v.Permission {
		case Deny:
			telemetry.GuardDecision(ctx, "permission", telemetry.GuardDenied, v.Why)
			g.audit.Record(Event{Event: EventPermissionDenied, Tool: name, Server: server,
				Reason: v.Why, Args: g.previewForAudit(args)})
			return denied(fmt.Sprintf("the user's permission policy denies %s (%s), so it was not called. Tell the user the policy blocks this tool; do not try to reach the same result another way.",
				describeCall(name, server), v.Why)), nil
		case Ask:
			cause := AskDefault
			switch {
			case v.Rule != nil:
				cause = AskRule
			case g.confirm[name]:
				cause = AskConfirmList
			}
			// A server that is down fails the call anyway: say so now
			// rather than after the user approved it.
			if ready != nil {
				if err := ready(ctx); err != nil {
					return nil, err
				}
			}
			if d, ok := g.ask(ctx, ConfirmRequest{Tool: name, Server: server, Args: args, Why: v.Why, Cause: cause}); !ok {
				return d, nil
			}
		}
		if inner == nil {
			return nil, fmt.Errorf("tool %s has no Execute function", name)
		}
		out, err := inner(ctx, args)
		if !g.cfg.PII {
			return out, err
		}
		if err != nil {
			return nil, maskError(err)
		}
		return MaskOutput(out)
	})
}

// ask asks the confirmer about a call and records the answer. It returns
// the refusal to give the model and false when the call may not run.
func (g *Guards) ask(ctx context.Context, req ConfirmRequest) (json.RawMessage, bool) {
	name, server, args := req.Tool, req.Server, req.Args
	d := Decision{Reason: "no confirmer is configured, so nobody could approve the call"}
	if g.confirmer != nil {
		d = confirmTraced(ctx, g.confirmer, req)
	}
	decision := "refused"
	if d.Approved {
		decision = "approved"
	}
	telemetry.GuardDecision(ctx, "confirm", decision, d.Reason)
	g.audit.Record(Event{Event: EventConfirm, Tool: name, Server: server, Decision: decision,
		Reason: d.Reason, Args: g.previewForAudit(args)})
	if !d.Approved {
		return denied(fmt.Sprintf("the user did not approve the call to %s (%s), so it was not called.",
			describeCall(name, server), d.Reason)), false
	}
	return nil, true
}

// MaskTool returns t with PII masking of its output when the PII guard is
// on, and t itself otherwise. It is meant for local tools whose output
// quotes data the user did not type, such as the knowledge-base search;
// unlike Wrap it applies no other guard and works on local tools.
func (g *Guards) MaskTool(t *agent.Tool) *agent.Tool {
	if t == nil || g == nil || !g.cfg.PII {
		return t
	}
	inner := t.Execute
	return withExecute(t, func(ctx context.Context, args json.RawMessage) (any, error) {
		if inner == nil {
			return nil, fmt.Errorf("tool %s has no Execute function", t.Name)
		}
		out, err := inner(ctx, args)
		if err != nil {
			return nil, maskError(err)
		}
		return MaskOutput(out)
	})
}

// withExecute copies t's fields into a new Tool with another Execute. The
// fields are copied one by one because Tool holds a sync.Once and a cached
// schema that must not be shared.
func withExecute(t *agent.Tool, exec agent.ExecuteFunc) *agent.Tool {
	return &agent.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  t.InputSchema,
		OutputSchema: t.OutputSchema,
		ReadOnly:     t.ReadOnly,
		Idempotent:   t.Idempotent,
		Destructive:  t.Destructive,
		OpenWorld:    t.OpenWorld,
		Origin:       t.Origin,
		Validate:     t.Validate,
		Execute:      exec,
		Ready:        t.Ready,
	}
}

// MaskOutput masks a tool's output in the shapes agent.FormatOutput
// accepts: text that is a JSON object or array, and json.RawMessage or
// []byte holding JSON, stay valid JSON; other text is masked as text; any
// other value is encoded to JSON first and returned as json.RawMessage.
func MaskOutput(out any) (any, error) {
	switch o := out.(type) {
	case nil:
		return nil, nil
	case string:
		return MaskText(o), nil
	case json.RawMessage:
		return json.RawMessage(MaskText(string(o))), nil
	case []byte:
		return []byte(MaskText(string(o))), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("tool output cannot be encoded as JSON for PII masking: %w", err)
	}
	return json.RawMessage(MaskJSON(b)), nil
}

// maskedError is a tool error whose message has personal numbers masked;
// the original stays reachable with errors.Is and errors.As.
type maskedError struct {
	msg string
	err error
}

func (e *maskedError) Error() string { return e.msg }
func (e *maskedError) Unwrap() error { return e.err }

// maskError masks the message of a tool error, which the model sees as
// well: an MCP server's isError text can quote the same data as its output.
func maskError(err error) error {
	msg := err.Error()
	if m := MaskPII(msg); m != msg {
		return &maskedError{msg: m, err: err}
	}
	return err
}

// previewForAudit is the argument preview stored in the audit log, masked
// when the PII guard is on so the log does not collect what the guard hides
// from the model.
func (g *Guards) previewForAudit(args json.RawMessage) string {
	p := previewArgs(args)
	if g.cfg.PII {
		p = MaskPII(p)
	}
	return p
}

// ErrInputRefused is matched (errors.Is) by the error of a refused user
// message.
var ErrInputRefused = errors.New("message refused by the input guard")

// CheckUserMessage scans a user message when the input guard is on
// (AGENT_GUARD_INPUT). A message with an injection pattern is refused with
// an *InjectionError naming the pattern, which also matches
// ErrInputRefused, and an audit line; the chat should show the error and
// not send the message to the model.
func (g *Guards) CheckUserMessage(msg string) error {
	return g.CheckSuppliedMessage("your message", "a user message", msg)
}

// CheckSuppliedMessage is CheckUserMessage for any message a caller
// supplies, the history of an OpenAI-compatible request included: an
// earlier user message or a made-up assistant or tool message reaches the
// model as much as the last one does. source names the message in the
// error ("messages[2] (assistant)"), kind in the audit line.
func (g *Guards) CheckSuppliedMessage(source, kind, msg string) error {
	if g == nil || !g.cfg.Input {
		return nil
	}
	f, ok := ScanInput(msg)
	if !ok {
		return nil
	}
	g.audit.Record(Event{Event: EventInputRejected, Reason: "prompt-injection pattern in " + kind,
		Pattern: f.Pattern, Match: f.Match})
	return &inputError{InjectionError{Source: source, Finding: f}}
}

// CheckViewContext scans the context an MCP App view reported for the
// model (ui/update-model-context) and records a finding in the audit log
// as view_context_rejected. It runs whatever the input guard's setting:
// the text comes from a third-party server and the user never saw it. A
// nil *Guards still scans, without auditing. source names the view in the
// error and the audit line.
func (g *Guards) CheckViewContext(source, text string) error {
	f, ok := ScanInput(text)
	if !ok {
		return nil
	}
	if g != nil {
		g.audit.Record(Event{Event: EventViewContextRejected, Reason: "prompt-injection pattern in " + source,
			Pattern: f.Pattern, Match: f.Match})
	}
	return &InjectionError{Source: source, Finding: f}
}

// inputError is the InjectionError of a refused message; it also matches
// ErrInputRefused.
type inputError struct{ InjectionError }

func (e *inputError) Is(target error) bool { return target == ErrInputRefused }

// As lets errors.As find the *InjectionError inside.
func (e *inputError) As(target any) bool {
	if p, ok := target.(**InjectionError); ok {
		*p = &e.InjectionError
		return true
	}
	return false
}

// CheckDocument is the package-level CheckDocument that also records a
// refusal in the audit log. The ingest check does not depend on any guard
// switch: a poisoned document stays in the knowledge base and reaches every
// later conversation, so it is refused always. A nil *Guards still checks,
// without auditing.
func (g *Guards) CheckDocument(name string, chunks []string) error {
	err := CheckDocument(name, chunks)
	var ie *InjectionError
	if g != nil && errors.As(err, &ie) {
		g.audit.Record(Event{Event: EventIngestRejected, Document: name, Chunk: ie.Chunk,
			Reason: "prompt-injection pattern in a document", Pattern: ie.Finding.Pattern, Match: ie.Finding.Match})
	}
	return err
}

// MaskText masks personal numbers in text for the model (knowledge-base
// hits, for one) when the PII guard is on, and returns s unchanged
// otherwise. JSON objects and arrays stay valid JSON.
func (g *Guards) MaskText(s string) string {
	if g == nil || !g.cfg.PII {
		return s
	}
	return MaskText(s)
}
