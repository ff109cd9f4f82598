package telemetry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys. Those of the semantic conventions for generative AI and
// MCP (development status) keep their names; agentapp's own start with
// "agentapp.".
const (
	AttrErrorType = attribute.Key("error.type")

	AttrGenAIOperation       = attribute.Key("gen_ai.operation.name")
	AttrGenAIProvider        = attribute.Key("gen_ai.provider.name")
	AttrGenAIRequestModel    = attribute.Key("gen_ai.request.model")
	AttrGenAIResponseModel   = attribute.Key("gen_ai.response.model")
	AttrGenAIInputTokens     = attribute.Key("gen_ai.usage.input_tokens")
	AttrGenAIOutputTokens    = attribute.Key("gen_ai.usage.output_tokens")
	AttrGenAIFinishReasons   = attribute.Key("gen_ai.response.finish_reasons")
	AttrGenAIConversationID  = attribute.Key("gen_ai.conversation.id")
	AttrGenAIAgentName       = attribute.Key("gen_ai.agent.name")
	AttrGenAIToolName        = attribute.Key("gen_ai.tool.name")
	AttrGenAIToolCallID      = attribute.Key("gen_ai.tool.call.id")
	AttrGenAIToolType        = attribute.Key("gen_ai.tool.type")
	AttrGenAIToolArguments   = attribute.Key("gen_ai.tool.call.arguments")
	AttrGenAIToolResult      = attribute.Key("gen_ai.tool.call.result")
	AttrGenAIRequestMaxToken = attribute.Key("gen_ai.request.max_tokens")

	AttrMCPMethod          = attribute.Key("mcp.method.name")
	AttrMCPSessionID       = attribute.Key("mcp.session.id")
	AttrMCPProtocolVersion = attribute.Key("mcp.protocol.version")
	AttrMCPResourceURI     = attribute.Key("mcp.resource.uri")
	AttrJSONRPCRequestID   = attribute.Key("jsonrpc.request.id")
	AttrRPCStatusCode      = attribute.Key("rpc.response.status_code")
	AttrNetworkTransport   = attribute.Key("network.transport")

	// AttrMCPServer is the name the client's configuration gives the MCP
	// server (the conventions have no attribute for it).
	AttrMCPServer = attribute.Key("agentapp.mcp.server")
	// AttrToolServer is the MCP server a tool call went to; absent for a
	// local tool.
	AttrToolServer = attribute.Key("agentapp.tool.server")
	// AttrToolOutcome is how a tool call ended: ok, error (the tool
	// reported a failure) or denied (a guard refused it).
	AttrToolOutcome = attribute.Key("agentapp.tool.outcome")
	// AttrFrontEnd is the front end a turn came from: chat, web (the chat
	// API) or v1 (the OpenAI-compatible endpoint).
	AttrFrontEnd = attribute.Key("agentapp.front_end")
	// AttrDirect marks a request answered or sent on a direct tools/call
	// path rather than the SDK's.
	AttrDirect = attribute.Key("agentapp.mcp.direct")

	AttrGuardDecision = attribute.Key("agentapp.guard.decision")
	AttrGuardRule     = attribute.Key("agentapp.guard.rule")
	AttrGuardReason   = attribute.Key("agentapp.guard.reason")
	AttrGuardWaitMS   = attribute.Key("agentapp.guard.wait_ms")

	AttrKBQuery   = attribute.Key("agentapp.kb.query")
	AttrKBLimit   = attribute.Key("agentapp.kb.limit")
	AttrKBResults = attribute.Key("agentapp.kb.results")
)

// typeName is err's Go type, for error.type.
func typeName(err error) string { return fmt.Sprintf("%T", err) }

// StartTurn starts the span of one turn of a conversation: the user's
// message to the final answer, with the model calls, tool calls and MCP
// requests under it. The host calls it once per turn (front end "chat",
// "web" or "v1"); session is the conversation's id. nil t returns ctx and
// a nil *Span.
func (t *Tracing) StartTurn(ctx context.Context, session, frontEnd string) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	return t.start(ctx, "invoke_agent agentapp", trace.SpanKindInternal,
		AttrGenAIOperation.String("invoke_agent"),
		AttrGenAIAgentName.String("agentapp"),
		AttrGenAIConversationID.String(session),
		AttrFrontEnd.String(frontEnd))
}

// StartModelCall starts the span of one model call under ctx's trace:
// "chat {model}", with the request's model.
func StartModelCall(ctx context.Context, model string, maxTokens int64) (context.Context, *Span) {
	t := FromContext(ctx)
	if t == nil {
		return ctx, nil
	}
	ctx, sp := t.start(ctx, "chat "+model, trace.SpanKindClient,
		AttrGenAIOperation.String("chat"), AttrGenAIRequestModel.String(model))
	if maxTokens > 0 {
		sp.span.SetAttributes(AttrGenAIRequestMaxToken.Int64(maxTokens))
	}
	return ctx, sp
}

// EndModelCall records a model call's answer (token counts, the finish
// reason) or its error, and ends s.
func (s *Span) EndModelCall(inputTokens, outputTokens int, finishReason string, err error) {
	if s == nil {
		return
	}
	if err != nil {
		s.Fail(err)
	} else {
		s.span.SetAttributes(AttrGenAIInputTokens.Int(inputTokens), AttrGenAIOutputTokens.Int(outputTokens))
		if finishReason != "" {
			s.span.SetAttributes(AttrGenAIFinishReasons.StringSlice([]string{finishReason}))
		}
	}
	s.span.End()
}

// StartToolCall starts the span of one tool call under ctx's trace:
// "execute_tool {tool}". server is the MCP server the tool comes from, ""
// for a local tool. The arguments are recorded only with RecordContent.
func StartToolCall(ctx context.Context, tool, callID, server string, args []byte) (context.Context, *Span) {
	t := FromContext(ctx)
	if t == nil {
		return ctx, nil
	}
	ctx, sp := t.start(ctx, "execute_tool "+tool, trace.SpanKindInternal)
	kind := "function"
	if server != "" {
		kind = "extension"
	}
	sp.span.SetAttributes(AttrGenAIOperation.String("execute_tool"),
		AttrGenAIToolName.String(tool), AttrGenAIToolType.String(kind))
	if callID != "" {
		sp.span.SetAttributes(AttrGenAIToolCallID.String(callID))
	}
	if server != "" {
		sp.span.SetAttributes(AttrToolServer.String(ServerName(server)))
	}
	if sp.content && args != nil {
		sp.span.SetAttributes(AttrGenAIToolArguments.String(string(args)))
	}
	return ctx, sp
}

// EndToolCall records a tool call's outcome and ends s: "ok", or "error"
// with err, or the outcome a guard gave it. The result is recorded only
// with RecordContent.
func (s *Span) EndToolCall(result string, err error) {
	if s == nil {
		return
	}
	switch {
	case err != nil:
		s.span.SetAttributes(AttrToolOutcome.String("error"))
		s.Fail(err)
	case s.denied.Load():
		s.span.SetAttributes(AttrToolOutcome.String("denied"))
	default:
		s.span.SetAttributes(AttrToolOutcome.String("ok"))
	}
	if err == nil && s.content {
		s.span.SetAttributes(AttrGenAIToolResult.String(result))
	}
	s.span.End()
}

// StartSearch starts the span of a knowledge-base search under ctx's
// trace. The query is recorded only with RecordContent.
func StartSearch(ctx context.Context, query string, limit int) (context.Context, *Span) {
	ctx, sp := child(ctx, "kb.search", trace.SpanKindInternal)
	if sp == nil {
		return ctx, nil
	}
	sp.span.SetAttributes(AttrKBLimit.Int(limit))
	if sp.content {
		sp.span.SetAttributes(AttrKBQuery.String(query))
	}
	return ctx, sp
}

// EndSearch records how many results a search found, or its error, and
// ends s.
func (s *Span) EndSearch(results int, err error) {
	if s == nil {
		return
	}
	if err != nil {
		s.Fail(err)
	} else {
		s.span.SetAttributes(AttrKBResults.Int(results))
	}
	s.span.End()
}

// Guard decisions, as the guard event's agentapp.guard.decision.
const (
	GuardAllowed  = "allowed"
	GuardDenied   = "denied"
	GuardApproved = "approved"
	GuardRefused  = "refused"
	GuardMasked   = "masked"
)

// GuardDecision adds a "guard.decision" event to the span ctx carries
// (the tool call's): which rule decided (allowlist, injection, confirm,
// pii, input) and what. A refusal makes the tool call's outcome "denied".
// Nothing happens with tracing off.
func GuardDecision(ctx context.Context, rule, decision, reason string) {
	sp := spanFrom(ctx)
	if sp == nil {
		return
	}
	sp.span.AddEvent("guard.decision", trace.WithAttributes(
		AttrGuardRule.String(rule), AttrGuardDecision.String(decision), AttrGuardReason.String(reason)))
	if decision == GuardDenied || decision == GuardRefused {
		sp.denied.Store(true)
	}
}

// StartApproval starts the span of a wait for the user's approval of a
// tool call ("guard.approval"); EndApproval records the answer and the
// wait. The guard's confirmation uses it; a front end that asks outside
// the guard calls it around its own question.
func StartApproval(ctx context.Context, tool, server string) (context.Context, *Span) {
	t := FromContext(ctx)
	if t == nil {
		return ctx, nil
	}
	ctx, sp := t.start(ctx, "guard.approval "+tool, trace.SpanKindInternal)
	sp.span.SetAttributes(AttrGenAIToolName.String(tool), AttrGuardRule.String("confirm"))
	if server != "" {
		sp.span.SetAttributes(AttrToolServer.String(ServerName(server)))
	}
	return ctx, sp
}

// EndApproval records whether the call was approved, why, and how long
// the wait was, and ends s.
func (s *Span) EndApproval(approved bool, reason string, waited time.Duration) {
	if s == nil {
		return
	}
	d := GuardRefused
	if approved {
		d = GuardApproved
	}
	s.span.SetAttributes(AttrGuardDecision.String(d), AttrGuardReason.String(reason), AttrGuardWaitMS.Float64(ms(waited)))
	s.span.End()
}
