package agentmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync/atomic"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DirectCalls answers the common tools/call, for the server's own tools,
// inside ServerIOTransport instead of handing it to the SDK.
//
// Why: a tool call that goes through the SDK's request path costs about
// twice as much CPU as the tool itself. The SDK decodes the params twice
// more (once only to look for _meta), each time with a decoder that
// allocates and clears a 32 KiB buffer, marshals the result twice, and
// starts a goroutine per request; most of a tools/call's allocations and
// garbage-collection work came from there (see bench/NOTES.md). A call
// the transport can answer directly is decoded once, run by runTool (the
// function the SDK path calls too, so the answer is the same, byte for
// byte; TestDirectCallsMatchSDK checks it) on a warm worker, and its
// result marshalled once.
//
// Only the plain case is taken: a request (not a notification) alone on
// its line, after the session's initialize has been answered, whose
// params hold nothing but "name" (one of these tools) and "arguments"
// (an object, or absent). Anything else (_meta with a progress token or
// a protocol version, a batch, an unknown tool, a call before initialize)
// goes to the SDK as before, so every protocol rule it enforces still
// holds. notifications/cancelled cancels a direct call's context, as the
// SDK would cancel its own, and a panicking tool becomes the same isError
// answer recoverMiddleware gives.
type DirectCalls struct {
	tools   map[string]*agent.Tool
	logger  *slog.Logger
	workers *warmWorkers
	taken   atomic.Int64 // calls answered directly, for tests
}

// directWorkers bounds the direct path's warm workers. A call beyond it
// runs on a fresh goroutine, whose stack then grows through the SQLite
// engine's deep frames on every call (copying it each time: a tenth of the
// CPU with 16 calls in flight and 4 workers). Clients keep up to about 16
// calls in flight; idle workers end after warmIdleTimeout, so the bound
// costs nothing at rest.
const directWorkers = 16

// NewDirectCalls returns the direct path for a server made by NewServer
// with the same opts; set it as ServerIOTransport.Direct.
func NewDirectCalls(opts ServerOptions) *DirectCalls {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	d := &DirectCalls{
		tools:   make(map[string]*agent.Tool, len(opts.Tools)),
		logger:  logger,
		workers: newWarmWorkers(directWorkers),
	}
	for _, t := range opts.Tools {
		if t != nil && t.Execute != nil {
			d.tools[t.Name] = t
		}
	}
	return d
}

// match returns the tool and arguments of a tools/call request the direct
// path can answer, or nil.
func (d *DirectCalls) match(req *jsonrpc.Request) (*agent.Tool, json.RawMessage) {
	if req.Method != "tools/call" || !req.IsCall() || len(req.Params) == 0 || req.Params[0] != '{' {
		return nil, nil
	}
	var name, args []byte
	plain := true
	forEachMember(req.Params, func(key, val []byte) {
		switch string(key) {
		case "name":
			name = val
		case "arguments":
			args = val
		default:
			plain = false
		}
	})
	if !plain || (args != nil && args[0] != '{') {
		return nil, nil
	}
	n, ok := jsonString(name)
	if !ok {
		return nil, nil
	}
	t := d.tools[n]
	if t == nil {
		return nil, nil
	}
	return t, json.RawMessage(args)
}

// call runs t and returns the encoded response to the request id.
func (d *DirectCalls) call(ctx context.Context, id jsonrpc.ID, t *agent.Tool, args json.RawMessage, session string) []byte {
	d.taken.Add(1)
	res := d.run(ctx, t, args, session)
	data, err := marshalResult(res)
	if err == nil {
		var enc []byte
		if enc, err = encodeMessage(nil, &jsonrpc.Response{ID: id, Result: data}); err == nil {
			return enc
		}
	}
	d.logger.Error("cannot encode a tool result", "tool", t.Name, "error", err)
	return appendErrorResponse(nil, id, jsonrpc.CodeInternalError,
		fmt.Sprintf("internal error while answering tools/call: the result of %s cannot be encoded", t.Name))
}

// run is runTool with recoverMiddleware's treatment of a panic.
func (d *DirectCalls) run(ctx context.Context, t *agent.Tool, args json.RawMessage, session string) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			what := "tool " + t.Name
			d.logger.Error("recovered from a panic while answering a request",
				"method", "tools/call", "what", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			res = panicResult(what)
		}
	}()
	return runTool(ctx, t, args, session)
}

// marshalResult encodes res exactly as the SDK's request path puts it on
// the wire: CallToolResult.MarshalJSON (encoding/json, HTML-escaping), then
// the SDK's compaction (which changes nothing in compact input).
//
// The results runTool makes have one shape: one plain text block, maybe
// structuredContent as raw JSON, maybe isError. That shape is assembled
// here directly, which costs a fraction of MarshalJSON's reflection over
// the result, its wire struct and each content block's own json.Marshal;
// anything else goes through MarshalJSON. TestDirectCallsMatchSDK checks
// the bytes against the SDK's path, so an SDK upgrade that changes the
// encoding fails there, not on the wire.
func marshalResult(res *mcp.CallToolResult) ([]byte, error) {
	tc, ok := plainText(res)
	if !ok {
		// MarshalJSON is what the SDK's encoder calls for the result;
		// its output is compact, so the SDK's later compaction changes
		// nothing.
		return res.MarshalJSON()
	}
	text, err := json.Marshal(tc.Text)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(text)+64+2*sizeOfRaw(res.StructuredContent))
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = append(b, text...)
	b = append(b, "}]"...)
	if sc, ok := res.StructuredContent.(json.RawMessage); ok && sc != nil && compactAndEscaped(sc) {
		// What runTool's tools return, marshalled by FormatOutput: as is.
		b = append(b, `,"structuredContent":`...)
		b = append(b, sc...)
	} else if ok && sc != nil {
		// encoding/json compacts a json.RawMessage and escapes <, >, &,
		// U+2028 and U+2029 in it: Compact, then HTMLEscape.
		var compact bytes.Buffer
		if err := json.Compact(&compact, sc); err != nil {
			return nil, fmt.Errorf("structuredContent: %w", err)
		}
		var escaped bytes.Buffer
		json.HTMLEscape(&escaped, compact.Bytes())
		b = append(b, `,"structuredContent":`...)
		b = append(b, escaped.Bytes()...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	return append(b, '}'), nil
}

// plainText reports whether res has the shape marshalResult assembles and
// returns its text block.
func plainText(res *mcp.CallToolResult) (*mcp.TextContent, bool) {
	if res == nil || res.Meta != nil || len(res.Content) != 1 || res.InputRequests != nil || res.RequestState != "" {
		return nil, false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc == nil || tc.Meta != nil || tc.Annotations != nil {
		return nil, false
	}
	switch sc := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if sc == nil {
			return nil, false // a typed nil in an interface: MarshalJSON decides
		}
	default:
		return nil, false
	}
	return tc, true
}

// compactAndEscaped reports whether the valid JSON raw has no white space
// outside strings and nothing HTMLEscape would change, so that encoding/json
// would copy it unchanged.
func compactAndEscaped(raw []byte) bool {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; c {
		case '<', '>', '&':
			return false
		case 0xE2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xA8 || raw[i+2] == 0xA9) {
				return false
			}
		case '\\':
			if inString {
				i++ // the escaped byte cannot end the string
			}
		case '"':
			inString = !inString
		case ' ', '\t', '\n', '\r':
			if !inString {
				return false
			}
		}
	}
	return true
}

func sizeOfRaw(v any) int {
	if r, ok := v.(json.RawMessage); ok {
		return len(r)
	}
	return 0
}
