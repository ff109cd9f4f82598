package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension of protocol 2026-07-28 (io.modelcontextprotocol/tasks)
// on the client side. We declare it in our capabilities (which a
// 2026-07-28 session sends with every request) where the server can be
// reached over HTTP, the transport on which that protocol is negotiated,
// unless the server's "tasks" setting is "never". With a server that
// declares it too, the server decides: any tools/call may come back as a
// task (resultType "task"). We then poll tasks/get, whose answer carries
// the result once the task is completed, answer the task's inputRequests
// (elicitation, sampling, roots) with tasks/update, and send tasks/cancel
// when the call is abandoned.
//
// The SDK's CallTool would decode such an answer into an empty
// CallToolResult, so on such a session a tools/call is sent under an
// alias of ours (tasks.ExtCallMethod, renamed on the wire like tasks.CallMethod)
// and its answer read raw.

// extTasks is the identifier of the tasks extension.
const extTasks = "io.modelcontextprotocol/tasks"

// maxInputRounds caps the inputRequests one task may ask us to answer.
const maxInputRounds = 20

// declareExtTasks adds the extension to the capabilities of a connection,
// which may speak 2026-07-28 (HTTP, and stdio since its server/discover
// probe; an older session ignores it).
func (b *Bridge) declareExtTasks(c *conn, caps *mcp.ClientCapabilities) {
	// Under the extension the server decides which calls become tasks,
	// so "required" (tasks only for the tools that require them) cannot
	// offer it: an optional tool would run as a task.
	if b.cfg.Tasks != mcpconfig.TasksNever && b.cfg.Tasks != mcpconfig.TasksRequired {
		caps.AddExtension(extTasks, map[string]any{})
	}
}

// extTasksOn reports whether the bridge's session speaks the tasks
// extension: protocol 2026-07-28 or later, and both sides declared it.
func (b *Bridge) extTasksOn() bool { return b.extOn(b.current()) }

func (b *Bridge) extOn(c *conn) bool {
	if c == nil || c.session == nil || b.cfg.Tasks == mcpconfig.TasksNever {
		return false
	}
	ir := c.session.InitializeResult()
	if ir == nil || ir.ProtocolVersion < stdiofast.NewProtocolVersion || ir.Capabilities == nil {
		return false
	}
	_, ok := ir.Capabilities.Extensions[extTasks]
	return ok
}

// callExt is CallTool on a session of the extension; the call is tracked
// already.
func (b *Bridge) callExt(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	p, retire := b.withProgressToken(p)
	defer retire()
	ep := &tasks.ExtToolCallParams{Name: p.Name, Arguments: p.Arguments}
	if len(p.Meta) > 0 {
		ep.Meta = p.Meta
	}
	// The call itself has the call timeout; a task, once created, has
	// its own bound.
	cctx, cancel, _ := b.bound(ctx)
	raw, err := b.extCallRaw(cctx, c, p, ep)
	cancel()
	if err != nil {
		return nil, b.callFailed(ctx, c, err)
	}
	switch stdiofast.ResultType(raw) {
	case "task":
		var t tasks.ExtTask
		if err := json.Unmarshal(raw, &t); err != nil || t.TaskID == "" || t.Status == "" {
			return nil, fmt.Errorf("server %s answered tools/call %s with a task that has no taskId or status (%s)", b.name, p.Name, textsafe.Preview(string(raw), 200))
		}
		bound := b.taskTimeout()
		if t.TTLMs != nil && *t.TTLMs > 0 {
			bound = min(bound, time.Duration(*t.TTLMs)*time.Millisecond)
		}
		r := &taskRun{b: b, c: c, tool: p.Name, id: t.TaskID, bound: bound}
		return r.runExt(ctx, &t)
	case "input_required":
		return b.callLoop(ctx, c, p)
	}
	res, err := stdiofast.DecodeToolResult(raw)
	if errors.Is(err, stdiofast.ErrNeedsSDK) {
		return b.callLoop(ctx, c, p)
	}
	if err != nil {
		return nil, fmt.Errorf("server %s answered tools/call %s with neither a tool result nor a task: %v", b.name, p.Name, err)
	}
	return res, nil
}

// callLoop answers a multi-round-trip result: the SDK's own path runs
// that loop.
func (b *Bridge) callLoop(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	cctx, cancel, _ := b.bound(ctx)
	defer cancel()
	res, err := c.session.CallTool(cctx, p)
	if err != nil {
		return nil, b.callFailed(ctx, c, err)
	}
	return res, nil
}

// extCallRaw sends the call of the extension: on a stdio connection's
// direct path once it has the session's _meta (package stdiofast), else
// through the SDK's session (also when the call is traced: the SDK path's
// middleware makes its span); the result comes back undecoded.
func (b *Bridge) extCallRaw(ctx context.Context, c *conn, p *mcp.CallToolParams, ep *tasks.ExtToolCallParams) (json.RawMessage, error) {
	if c.direct != nil && c.direct.HasSessionMeta() && telemetry.FromContext(ctx) == nil {
		raw, err := c.direct.CallToolRaw(ctx, &mcp.CallToolParams{Meta: ep.Meta, Name: p.Name, Arguments: ep.Arguments})
		if !errors.Is(err, stdiofast.ErrNeedsSDK) {
			return raw, err
		}
	}
	raw, err := mcp.CallCustomMethod[*tasks.ExtToolCallParams, *tasks.RawResult](ctx, c.session, tasks.ExtCallMethod, ep)
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		// The server refused tools/call: the alias is the bridge's own.
		return nil, fmt.Errorf("calling %q: %w", "tools/call", werr)
	}
	if err != nil {
		return nil, err
	}
	return raw.Raw, nil
}

// runExt watches a task of the extension to its end.
func (r *taskRun) runExt(ctx context.Context, t *tasks.ExtTask) (*mcp.CallToolResult, error) {
	tctx, cancel := context.WithTimeout(ctx, r.bound)
	defer cancel()
	p := tasks.NewPace(tasks.PollInterval(t.Task()), nil)
	answered := map[string]bool{}
	rounds := 0
	timer := time.NewTimer(0)
	defer timer.Stop()
	if !timer.Stop() {
		<-timer.C
	}
	for {
		if r.report(ctx, t.Task()) {
			p.Changed()
		}
		switch t.Status {
		case tasks.Completed:
			var res mcp.CallToolResult
			if err := json.Unmarshal(t.Result, &res); err != nil || len(t.Result) == 0 {
				return nil, r.fail(err, "tool %s ran as task %s on server %s, which completed it without a tool result", r.tool, r.id, r.b.name)
			}
			if res.Meta == nil {
				res.Meta = mcp.Meta{}
			}
			res.Meta[tasks.MetaKey] = r.id
			return &res, nil
		case tasks.Failed:
			msg := t.StatusMessage
			if t.Error != nil {
				msg = t.Error.Message
			}
			return nil, r.fail(t.Error, "tool %s ran as task %s on server %s, which failed it%s; it has no result", r.tool, r.id, r.b.name, because(msg))
		case tasks.Cancelled:
			return nil, r.fail(nil, "tool %s ran as task %s on server %s, which cancelled it%s; it has no result", r.tool, r.id, r.b.name, because(t.StatusMessage))
		case tasks.InputRequired:
			if err := r.answerInputs(tctx, t, answered, &rounds); err != nil {
				r.cancelExt(ctx)
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, err
			}
		}
		timer.Reset(p.Wait())
		select {
		case <-tctx.Done():
			r.cancelExt(ctx)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, r.fail(context.DeadlineExceeded, "tool %s ran as task %s on server %s for %s, its bound (the server's TTL for the task, capped by the config's \"taskTimeout\"), and was cancelled; ask the user whether to start it again", r.tool, r.id, r.b.name, r.bound)
		case <-timer.C:
		}
		nt, err := tasks.GetExt(tctx, r.c.session, r.id)
		if err != nil {
			if tctx.Err() != nil {
				continue
			}
			if r.pollFailed(p, err) {
				r.cancelExt(ctx)
				return nil, r.fail(err, "tool %s ran as task %s on server %s, and asking for its state failed: %s; it was cancelled", r.tool, r.id, r.b.name, safeText(err))
			}
			continue
		}
		t = nt
		p.Polled(tasks.PollInterval(t.Task()))
	}
}

// answerInputs answers the task's inputRequests not answered yet (the
// same key comes back on every poll until the server has the answer) and
// sends the answers with tasks/update.
func (r *taskRun) answerInputs(ctx context.Context, t *tasks.ExtTask, answered map[string]bool, rounds *int) error {
	responses := map[string]any{}
	for key, req := range t.InputRequests {
		if answered[key] {
			continue
		}
		if *rounds++; *rounds > maxInputRounds {
			return r.fail(nil, "tool %s ran as task %s on server %s, which asked for input more than %d times; it was cancelled", r.tool, r.id, r.b.name, maxInputRounds)
		}
		res, err := r.b.answerInput(ctx, req)
		if err != nil {
			return r.fail(err, "tool %s ran as task %s on server %s, which asked for input (%s) the client could not give: %s; it was cancelled", r.tool, r.id, r.b.name, textsafe.Escape(req.Method), safeText(err))
		}
		responses[key] = res
		answered[key] = true
	}
	if len(responses) == 0 {
		return nil
	}
	_, err := mcp.CallCustomMethod[*tasks.UpdateParams, *tasks.RawResult](ctx, r.c.session, "tasks/update", &tasks.UpdateParams{TaskID: r.id, InputResponses: responses})
	if err != nil {
		return r.fail(err, "tool %s ran as task %s on server %s, and sending the input it asked for failed: %s; it was cancelled", r.tool, r.id, r.b.name, safeText(err))
	}
	return nil
}

// answerInput answers one of a task's inputRequests as the bridge answers
// the same request sent on its own.
func (b *Bridge) answerInput(ctx context.Context, req tasks.InputRequest) (any, error) {
	switch req.Method {
	case "elicitation/create":
		if b.opts.elicitor == nil {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		var p mcp.ElicitParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, fmt.Errorf("its elicitation/create params do not decode: %v", err)
		}
		return b.onElicit(ctx, &mcp.ElicitRequest{Params: &p})
	case "sampling/createMessage":
		if b.opts.sampler == nil {
			return nil, errors.New("this client does not offer sampling")
		}
		var p mcp.CreateMessageParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, fmt.Errorf("its sampling/createMessage params do not decode: %v", err)
		}
		return b.onCreateMessage(ctx, &mcp.CreateMessageRequest{Params: &p})
	case "roots/list":
		roots := b.Roots()
		if roots == nil {
			roots = []*mcp.Root{}
		}
		return &mcp.ListRootsResult{Roots: roots}, nil
	}
	return nil, fmt.Errorf("%q is not a request the client answers", req.Method)
}

// cancelExt sends the extension's tasks/cancel for an abandoned task,
// bounded and detached from the context that ended; its answer is an
// acknowledgement only.
func (r *taskRun) cancelExt(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelTimeout)
	defer cancel()
	if _, err := mcp.CallCustomMethod[*tasks.IDParams, *tasks.RawResult](cctx, r.c.session, "tasks/cancel", &tasks.IDParams{TaskID: r.id}); err != nil {
		r.b.opts.logger.Warn("mcp: cancelling an abandoned task failed; the server may run it to its end", "server", r.b.name, "tool", r.tool, "task", r.id, "error", safeText(err))
	}
}
