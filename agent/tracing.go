package agent

import (
	"context"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/telemetry"
)

// Tracing of the loop: a span per model call and per tool call, under the
// trace of the run's context (the host's turn span). Without one, each
// costs a context lookup and nothing else.

// generate asks the model for its reply inside a model-call span.
func generate(ctx context.Context, opts *Options, req *model.Request) (*model.Response, error) {
	if !telemetry.Enabled(ctx) {
		return ask(ctx, opts, req)
	}
	ctx, sp := telemetry.StartModelCall(ctx, opts.Model.Name(), req.MaxTokens)
	resp, err := ask(ctx, opts, req)
	if resp != nil {
		sp.EndModelCall(resp.Usage.InputTokens, resp.Usage.OutputTokens, resp.FinishReason, err)
	} else {
		sp.EndModelCall(0, 0, "", err)
	}
	return resp, err
}

// ask streams the reply when the run wants text or tool calls as they
// come.
func ask(ctx context.Context, opts *Options, req *model.Request) (*model.Response, error) {
	if opts.OnText != nil || opts.OnToolCallDelta != nil {
		return opts.Model.Stream(ctx, req, opts.OnText)
	}
	return opts.Model.Generate(ctx, req)
}

// tracedTool is callTool inside a tool-call span (tool, call id, the MCP
// server it comes from, outcome; arguments and result only when the
// tracing records content).
func tracedTool(ctx context.Context, tools *ToolSet, c model.ToolCall) (string, error) {
	if !telemetry.Enabled(ctx) {
		return callTool(ctx, tools, c)
	}
	origin := ""
	if t, ok := tools.Get(c.Name); ok {
		origin = t.Origin
	}
	ctx, sp := telemetry.StartToolCall(ctx, c.Name, c.ID, origin, c.Arguments)
	out, err := callTool(ctx, tools, c)
	sp.EndToolCall(out, err)
	return out, err
}
