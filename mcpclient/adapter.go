package mcpclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolCaller sends tools/call to a server. A *Bridge and an
// *mcp.ClientSession both satisfy it; tests use fakes.
type ToolCaller interface {
	CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error)
}

// ErrorKind classifies why an adapted tool call failed, so that callers (the
// resilience layer, traces) can react without parsing messages.
type ErrorKind int

const (
	// KindToolError: the server ran the tool and it reported an error
	// (isError). The model should fix its arguments and retry.
	KindToolError ErrorKind = iota + 1
	// KindArguments: the arguments were not a JSON object.
	KindArguments
	// KindTimeout: the per-call timeout expired; the call was cancelled on
	// the server.
	KindTimeout
	// KindRejected: the server answered with a JSON-RPC error (unknown
	// tool, invalid parameters…).
	KindRejected
	// KindConnection: the call could not be delivered or answered (closed
	// connection, crashed process, network error).
	KindConnection
	// KindUnmappable: the result had nothing the model can read.
	KindUnmappable
	// KindTask: the call ran as an MCP task that ended without a result
	// (cancelled, out of time, lost) or could not run as one (tasks.go).
	KindTask
)

// CallError is the error of an adapted MCP tool call. Its message is written
// for the model, which sees it as the tool's result.
type CallError struct {
	Tool   string
	Server string
	Kind   ErrorKind
	msg    string
	Err    error
}

func (e *CallError) Error() string { return e.msg }
func (e *CallError) Unwrap() error { return e.Err }

// errBridgeClosed is the cancellation cause of calls cut short by Close.
var errBridgeClosed = errors.New("the connection was closed")

// AdaptTool turns one MCP tool descriptor into an engine tool.
//
// rawSchema is the inputSchema exactly as the server sent it; it is used
// verbatim so that what the model is offered is what the server wrote (a
// provider-specific sanitised copy is made later, per request, never here).
// When rawSchema is empty the SDK's decoded schema is re-encoded instead.
// The tool has Validate set: the loop checks the arguments against the
// schema before any approval is asked and before the call is sent, so a
// call missing a required argument reaches neither the user nor the
// server (the server validates again; a schema the validator cannot
// compile is left to it).
func AdaptTool(c ToolCaller, server string, t *mcp.Tool, rawSchema json.RawMessage, callTimeout time.Duration) *agent.Tool {
	return adaptTool(c, server, t, t.Name, rawSchema, nil, callTimeout)
}

func adaptTool(c ToolCaller, server string, t *mcp.Tool, exposedName string, rawIn, rawOut json.RawMessage, callTimeout time.Duration) *agent.Tool {
	if callTimeout <= 0 {
		callTimeout = defaultCallTimeout
	}
	in := rawIn
	if len(in) == 0 {
		in = marshalSchema(t.InputSchema)
	}
	if len(in) == 0 {
		// The protocol requires an input schema; a server that omits it
		// takes no arguments as far as anyone can tell.
		in = json.RawMessage(`{"type":"object"}`)
	}
	out := rawOut
	if len(out) == 0 {
		out = marshalSchema(t.OutputSchema)
	}
	at := &agent.Tool{
		Name:         exposedName,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  in,
		OutputSchema: out,
		Origin:       server,
		Validate:     true,
	}
	if a := t.Annotations; a != nil {
		if at.Title == "" {
			at.Title = a.Title
		}
		at.ReadOnly = a.ReadOnlyHint
		at.Idempotent = a.IdempotentHint
		at.Destructive = a.DestructiveHint
		at.OpenWorld = a.OpenWorldHint
	}
	remote := t.Name
	at.Execute = func(ctx context.Context, args json.RawMessage) (any, error) {
		return callAdapted(ctx, c, server, exposedName, remote, args, callTimeout)
	}
	return at
}

func marshalSchema(s any) json.RawMessage {
	if s == nil || (reflect.ValueOf(s).Kind() == reflect.Pointer && reflect.ValueOf(s).IsNil()) {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil || string(b) == "null" {
		return nil
	}
	return b
}

// callAdapted runs one tools/call and maps its outcome to what the model sees.
func callAdapted(ctx context.Context, c ToolCaller, server, name, remote string, args json.RawMessage, timeout time.Duration) (any, error) {
	fail := func(kind ErrorKind, err error, format string, a ...any) error {
		return &CallError{Tool: name, Server: server, Kind: kind, Err: err, msg: fmt.Sprintf(format, a...)}
	}
	m, err := agent.DecodeArgs(args)
	if err != nil {
		return nil, fail(KindArguments, err, "tool %s was not called: %v; send the arguments as a JSON object", name, err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := &mcp.CallToolParams{Name: remote, Arguments: m}
	if len(args) > 0 && !bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		// Forward the model's bytes, not a re-encoding of the decoded map:
		// numbers keep their spelling and keys their order.
		p.Arguments = json.RawMessage(args)
	}
	res, err := c.CallTool(cctx, p)
	if err != nil {
		var taskErr *taskError
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err() // the run was cancelled; not the tool's fault
		case errors.As(err, &taskErr):
			return nil, fail(KindTask, err, "%s", taskErr.Error())
		case errors.Is(context.Cause(cctx), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
			return nil, fail(KindTimeout, err, "tool %s timed out after %s and was cancelled; try a smaller request or try again later", name, seconds(timeout))
		case errors.Is(err, errBridgeClosed):
			return nil, fail(KindConnection, err, "tool %s could not be called: the connection to server %s was closed", name, server)
		}
		var (
			exitErr    *serverExitError
			downErr    *serverDownError
			restartErr *restartError
		)
		if errors.As(err, &exitErr) || errors.As(err, &downErr) || errors.As(err, &restartErr) {
			// Their messages name the server, why it stopped and what
			// happens next.
			return nil, fail(KindConnection, err, "tool %s could not be called: %v", name, err)
		}
		if rpcErr, ok := serverRejected(err); ok {
			return nil, fail(KindRejected, err, "tool %s was rejected by server %s: %s (JSON-RPC error %d); check the tool name and arguments", name, server, textsafe.Preview(rpcErr.Message, maxErrorText), rpcErr.Code)
		}
		return nil, fail(KindConnection, err, "tool %s could not be called: %s (connection to server %s)", name, safeText(err), server)
	}
	if res == nil {
		return nil, fail(KindUnmappable, nil, "tool %s returned no result (server %s)", name, server)
	}
	if hook := resultHookFrom(ctx); hook != nil {
		hook(ctx, res)
	}
	if res.IsError {
		text := errorText(res)
		if id, ok := taskOf(res); ok {
			return nil, fail(KindToolError, nil, "tool %s ran as task %s and failed: %s; its work was not done: tell the user, and start it again only if the cause is fixed", name, id, text)
		}
		if taskRequired(c, remote) {
			return nil, fail(KindToolError, nil, "tool %s returned an error: %s; the tool runs only as an MCP task (long-running), which this call could not be: tell the user", name, text)
		}
		return nil, fail(KindToolError, nil, "tool %s returned an error: %s; fix the arguments and retry", name, text)
	}
	out, ok := mapResult(res)
	if !ok {
		return nil, fail(KindUnmappable, nil, "tool %s returned nothing the model can read (content types: %s; no text, structuredContent or toolResult)", name, contentTypes(res.Content))
	}
	return out, nil
}

// codeRejectedByTransport is the JSON-RPC code the SDK gives a request its
// transport could not send (an HTTP request that failed before any answer);
// the server never refused anything.
const codeRejectedByTransport = -32005

// serverRejected returns the JSON-RPC error the server answered with, if
// err is one (and not the SDK's wrapping of a transport failure).
func serverRejected(err error) (*jsonrpc.Error, bool) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != codeRejectedByTransport {
		return rpcErr, true
	}
	return nil, false
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// mapResult maps a successful result to the text the model sees; first
// match wins:
//  1. structuredContent that is an object: the bytes of a text block that
//     holds the same JSON (servers usually send both; their bytes keep the
//     server's key order), else the object re-encoded;
//  2. the content blocks joined by newlines: text as is, images, audio,
//     resource links and embedded resources described (type, MIME, size, URI);
//  3. a legacy toolResult, verbatim;
//  4. structuredContent of another JSON type, encoded.
//
// It reports false when none applies.
func mapResult(res *mcp.CallToolResult) (json.RawMessage, bool) {
	if obj, ok := res.StructuredContent.(map[string]any); ok {
		for _, c := range res.Content {
			tc, ok := c.(*mcp.TextContent)
			if !ok {
				continue
			}
			t := strings.TrimSpace(tc.Text)
			if !strings.HasPrefix(t, "{") {
				continue
			}
			var v any
			if json.Unmarshal([]byte(t), &v) == nil && reflect.DeepEqual(v, obj) {
				return json.RawMessage(t), true
			}
		}
		if b, err := json.Marshal(obj); err == nil {
			return b, true
		}
	}
	if lines, ok := describeContent(res.Content); ok {
		return json.RawMessage(strings.Join(lines, "\n")), true
	}
	if s, ok := res.Meta[stdiofast.LegacyToolResultKey].(string); ok {
		return json.RawMessage(s), true
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return b, true
		}
	}
	return nil, false
}

// describeContent renders content blocks for the model. It reports false
// when no block is text or describable.
func describeContent(content []mcp.Content) ([]string, bool) {
	var lines []string
	readable := false
	for _, c := range content {
		switch b := c.(type) {
		case *mcp.TextContent:
			lines = append(lines, b.Text)
			readable = true
		case *mcp.ImageContent:
			lines = append(lines, fmt.Sprintf("[image: %s, %d bytes]", orUnknown(b.MIMEType), len(b.Data)))
			readable = true
		case *mcp.AudioContent:
			lines = append(lines, fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(b.MIMEType), len(b.Data)))
			readable = true
		case *mcp.ResourceLink:
			lines = append(lines, describeLink(b))
			readable = true
		case *mcp.EmbeddedResource:
			lines = append(lines, describeEmbedded(b)...)
			readable = true
		default:
			lines = append(lines, fmt.Sprintf("[%s content not shown]", contentType(c)))
		}
	}
	return lines, readable
}

func describeLink(l *mcp.ResourceLink) string {
	var parts []string
	if l.Name != "" {
		parts = append(parts, "name "+strconv.Quote(l.Name))
	}
	parts = append(parts, orUnknown(l.MIMEType))
	if l.Size != nil {
		parts = append(parts, fmt.Sprintf("%d bytes", *l.Size))
	}
	s := fmt.Sprintf("[resource link: %s (%s)]", l.URI, strings.Join(parts, ", "))
	if l.Description != "" {
		s += " " + l.Description
	}
	return s
}

func describeEmbedded(e *mcp.EmbeddedResource) []string {
	r := e.Resource
	if r == nil {
		return []string{"[embedded resource: empty]"}
	}
	if r.Blob != nil {
		return []string{fmt.Sprintf("[embedded resource: %s (%s, %d bytes)]", r.URI, orUnknown(r.MIMEType), len(r.Blob))}
	}
	return []string{fmt.Sprintf("[embedded resource: %s (%s, %d bytes of text)]", r.URI, orUnknown(r.MIMEType), len(r.Text)), r.Text}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown MIME type"
	}
	return mime
}

// errorText is the server's explanation of an isError result.
func errorText(res *mcp.CallToolResult) string {
	if lines, ok := describeContent(res.Content); ok {
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			return s
		}
	}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return "(the server gave no details)"
}

func contentTypes(content []mcp.Content) string {
	if len(content) == 0 {
		return "none"
	}
	names := make([]string, len(content))
	for i, c := range content {
		names[i] = contentType(c)
	}
	return strings.Join(names, ", ")
}

func contentType(c mcp.Content) string {
	switch c.(type) {
	case *mcp.TextContent:
		return "text"
	case *mcp.ImageContent:
		return "image"
	case *mcp.AudioContent:
		return "audio"
	case *mcp.ResourceLink:
		return "resource_link"
	case *mcp.EmbeddedResource:
		return "resource"
	case *mcp.ToolUseContent:
		return "tool_use"
	case *mcp.ToolResultContent:
		return "tool_result"
	}
	return fmt.Sprintf("%T", c)
}

var _ = base64.StdEncoding
