package host

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/hooks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
)

// EventHook: a hook failed without blocking (Text says which and how),
// for the user; the turn goes on.
const EventHook EventKind = "hook"

// HookBlockedError is a prompt a UserPromptSubmit hook blocked: nothing
// was sent to the model or stored.
type HookBlockedError struct{ Reason string }

func (e *HookBlockedError) Error() string {
	return "a UserPromptSubmit hook blocked the message: " + e.Reason + " (nothing was sent to the model or stored)"
}

// maxStopContinues bounds how often Stop hooks keep one turn going in a
// row, so two hooks that disagree cannot loop without end.
const maxStopContinues = 3

// Hooks returns the hooks in force (each with its Source), for /hooks.
func (h *Host) Hooks() hooks.Config { return h.cfg.Hooks.Config() }

// hookFiles gathers the config files' hooks: a project's run only when
// approve says so (they come with the project, from whoever wrote it, and
// run commands), else they are left out with a warning.
func hookFiles(files []mcpconfig.ScopedHooks, approve func(mcpconfig.ScopedHooks) bool, logger *slog.Logger) hooks.Config {
	var c hooks.Config
	for _, f := range files {
		if f.Scope == mcpconfig.ScopeProject && (approve == nil || !approve(f)) {
			if approve == nil {
				logger.Warn(fmt.Sprintf("skipped the hooks of %s: nobody approved them", f.File))
			}
			continue
		}
		c = c.Add(f.Hooks)
	}
	return c
}

// hookNames are the names a tool matches by: its own and, for an MCP
// tool, mcp__SERVER__TOOL as Claude Code names it.
func hookNames(t *agent.Tool) []string {
	if t.Origin == "" || t.Origin == ResourceToolOrigin || t.Origin == SkillToolOrigin {
		return []string{t.Name}
	}
	return []string{t.Name, "mcp__" + t.Origin + "__" + t.Name}
}

// hookErrors reports hooks that failed without blocking, to the turn's
// events and the log.
func (h *Host) hookErrors(ctx context.Context, res hooks.Result) {
	notice, _ := ctx.Value(hookNoticeKey{}).(func(string))
	t := turnFrom(ctx)
	for _, msg := range append(res.Errors, res.SystemMessages...) {
		// A front end that shows it to the user makes the log's line
		// informational: the terminal would print it twice otherwise.
		switch {
		case t != nil && t.onEvent != nil:
			h.log.Debug(msg)
			t.emit(Event{Kind: EventHook, Text: msg})
		case notice != nil:
			h.log.Debug(msg)
			notice(msg)
		default:
			h.log.Warn(msg)
		}
	}
}

type hookNoticeKey struct{}

// WithHookNotice gives a call made outside a turn (Call) where to show
// the hooks that failed without blocking; a turn shows them as events.
func WithHookNotice(ctx context.Context, f func(msg string)) context.Context {
	return context.WithValue(ctx, hookNoticeKey{}, f)
}

// hookInput is the part of a hook's input every event has.
func (h *Host) hookInput(ctx context.Context, ev hooks.Event) hooks.Input {
	wd := ""
	if h.cfg.Hooks != nil {
		wd = h.cfg.Hooks.Dir
	}
	if wd == "" {
		wd, _ = os.Getwd()
	}
	return hooks.Input{SessionID: agent.SessionFrom(ctx), Cwd: wd, HookEventName: ev,
		PermissionMode: string(h.cfg.Guards.Config().Permissions.Mode)}
}

// hookedTool runs t's PreToolUse and PostToolUse hooks around its call
// (t is already guarded): a block or a deny returns the reason to the
// model instead of calling; an allow answers the confirmation the
// permission policy would ask (a deny rule, checked first, still wins);
// updatedInput replaces the arguments; PostToolUse sees the result, and
// its block reason or context goes to the model with it.
func (h *Host) hookedTool(t *agent.Tool) *agent.Tool {
	r := h.cfg.Hooks
	if !r.Has(hooks.PreToolUse) && !r.Has(hooks.PostToolUse) {
		return t
	}
	names := hookNames(t)
	inner := t.Execute
	// The fields one by one: a Tool holds a sync.Once and its compiled
	// schema, which must not be copied.
	nt := &agent.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema, ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: t.Destructive,
		OpenWorld: t.OpenWorld, Origin: t.Origin, Validate: t.Validate}
	nt.Execute = func(ctx context.Context, args json.RawMessage) (any, error) {
		if r.Has(hooks.PreToolUse) {
			in := h.hookInput(ctx, hooks.PreToolUse)
			in.ToolName, in.ToolInput = t.Name, args
			res := r.Run(ctx, in, names...)
			h.hookErrors(ctx, res)
			if res.Block || res.Permission == "deny" {
				reason := res.Reason
				if !res.Block {
					reason = res.PermissionReason
				}
				if reason == "" {
					reason = "no reason given"
				}
				b, _ := json.Marshal(guard.Denial{Denied: true, Reason: "a PreToolUse hook stopped the call to " + t.Name + ": " + reason})
				return json.RawMessage(b), nil
			}
			if len(res.UpdatedInput) > 0 {
				if t.Validate {
					if err := t.CheckArgs(res.UpdatedInput); err != nil {
						return nil, fmt.Errorf("a PreToolUse hook's updatedInput: %w", err)
					}
				}
				args = res.UpdatedInput
			}
			switch res.Permission {
			case "allow":
				ctx = context.WithValue(ctx, hookAllowed{}, res.PermissionReason)
			case "ask":
				// The user is asked whatever the policy says; a yes
				// answers the policy's own question too, so it is not
				// asked twice (a deny rule still wins).
				why := res.PermissionReason
				if why == "" {
					why = "no reason given"
				}
				d := (&eventConfirmer{h: h}).Confirm(ctx, guard.ConfirmRequest{Tool: t.Name, Server: t.Origin, Args: args, Why: "a PreToolUse hook asks: " + why})
				if !d.Approved {
					b, _ := json.Marshal(guard.Denial{Denied: true, Reason: "the user did not approve the call to " + t.Name + " (" + d.Reason + "), so it was not called"})
					return json.RawMessage(b), nil
				}
				ctx = context.WithValue(ctx, hookAllowed{}, "the user approved it when a PreToolUse hook asked")
			}
		}
		out, err := inner(ctx, args)
		if err != nil || !r.Has(hooks.PostToolUse) {
			return out, err
		}
		text, ferr := agent.FormatOutput(out)
		if ferr != nil {
			return out, err
		}
		in := h.hookInput(ctx, hooks.PostToolUse)
		in.ToolName, in.ToolInput = t.Name, args
		if json.Valid([]byte(text)) {
			in.ToolResponse = json.RawMessage(text)
		} else {
			in.ToolResponse, _ = json.Marshal(text)
		}
		res := r.Run(ctx, in, names...)
		h.hookErrors(ctx, res)
		var notes []string
		if res.Block {
			notes = append(notes, "A PostToolUse hook says: "+res.Reason)
		}
		notes = append(notes, res.Context...)
		if len(notes) == 0 {
			return out, nil
		}
		return text + "\n\n" + strings.Join(notes, "\n"), nil
	}
	return nt
}

// hookAllowed marks a call a PreToolUse hook allowed: the confirmation the
// permission policy asks for is answered yes without asking.
type hookAllowed struct{}

// promptHooks runs UserPromptSubmit over the user's message: a block
// refuses the turn with the hook's reason; context goes into the message
// for the model.
func (h *Host) promptHooks(ctx context.Context, session string, user model.Message) (model.Message, error) {
	if !h.cfg.Hooks.Has(hooks.UserPromptSubmit) {
		return user, nil
	}
	ctx = agent.WithSession(ctx, session)
	in := h.hookInput(ctx, hooks.UserPromptSubmit)
	in.Prompt = user.Content
	res := h.cfg.Hooks.Run(ctx, in)
	h.hookErrors(ctx, res)
	if res.Block {
		return user, &HookBlockedError{Reason: res.Reason}
	}
	if len(res.Context) > 0 {
		user.Content += "\n\n(Context a UserPromptSubmit hook added: " + strings.Join(res.Context, "\n") + ")"
	}
	return user, nil
}

// stopHooks runs Stop at the end of a turn's loop: a block keeps the turn
// going with the reason as the next instruction, at most
// maxStopContinues times in a row. It returns the reason, or "" to stop.
func (h *Host) stopHooks(ctx context.Context, active bool) string {
	if !h.cfg.Hooks.Has(hooks.Stop) {
		return ""
	}
	in := h.hookInput(ctx, hooks.Stop)
	in.StopHookActive = &active
	res := h.cfg.Hooks.Run(ctx, in)
	h.hookErrors(ctx, res)
	if !res.Block {
		return ""
	}
	if res.Reason == "" {
		return "a Stop hook asked to continue"
	}
	return res.Reason
}

// permissionHooks runs PermissionRequest when the policy asks about a
// call: an allow or deny (hookSpecificOutput.decision.behavior, or exit
// 2 for a deny) answers for the user; otherwise ok is false and the user
// is asked. Notification runs too, as the user is about to be asked.
func (h *Host) permissionHooks(ctx context.Context, req guard.ConfirmRequest) (d guard.Decision, ok bool) {
	r := h.cfg.Hooks
	if r.Has(hooks.Notification) {
		in := h.hookInput(ctx, hooks.Notification)
		in.Message = "agentapp needs your permission to use " + req.Tool
		h.hookErrors(ctx, r.Run(ctx, in, "permission_prompt"))
	}
	if !r.Has(hooks.PermissionRequest) {
		return d, false
	}
	in := h.hookInput(ctx, hooks.PermissionRequest)
	in.ToolName, in.ToolInput = req.Tool, req.Args
	names := []string{req.Tool}
	if req.Server != "" {
		names = append(names, "mcp__"+req.Server+"__"+req.Tool)
	}
	res := r.Run(ctx, in, names...)
	h.hookErrors(ctx, res)
	switch {
	case res.Block || res.Permission == "deny":
		why := res.Reason
		if !res.Block {
			why = res.PermissionReason
		}
		return guard.Decision{Reason: "a PermissionRequest hook denied it: " + why}, true
	case res.Permission == "allow":
		return guard.Decision{Approved: true, Reason: "a PermissionRequest hook allowed it: " + res.PermissionReason}, true
	}
	return d, false
}

// infoHooks runs an event whose answer only informs (PreCompact with its
// trigger, SessionStart with its source), and returns the context its
// hooks gave for the model.
func (h *Host) infoHooks(ctx context.Context, ev hooks.Event, what string) []string {
	if !h.cfg.Hooks.Has(ev) {
		return nil
	}
	in := h.hookInput(ctx, ev)
	switch ev {
	case hooks.PreCompact:
		in.Trigger = what
	case hooks.SessionStart:
		in.Source = what
	}
	res := h.cfg.Hooks.Run(ctx, in, what)
	h.hookErrors(ctx, res)
	return res.Context
}

// withHookContext returns msgs (not changed) with a SessionStart hook's
// context after the last user message's text.
func withHookContext(msgs []model.Message, ctx []string) []model.Message {
	out := slices.Clone(msgs)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == model.RoleUser {
			out[i].Content += "\n\n(Context a SessionStart hook added: " + strings.Join(ctx, "\n") + ")"
			break
		}
	}
	return out
}

// EndSession runs the SessionEnd hooks of a session a front end is done
// with (the chat's exit, its /new), with the reason Claude Code names
// ("clear", "prompt_input_exit", "other"). Their answers inform only.
func (h *Host) EndSession(ctx context.Context, session, reason string) {
	if session == "" || !h.cfg.Hooks.Has(hooks.SessionEnd) {
		return
	}
	ctx = agent.WithSession(ctx, session)
	in := h.hookInput(ctx, hooks.SessionEnd)
	in.Reason = reason
	h.hookErrors(ctx, h.cfg.Hooks.Run(ctx, in, reason))
}
