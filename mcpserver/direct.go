package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// matchDirect returns the tool and arguments of a tools/call request the
// direct path can answer (see Server), or nil.
func (s *Server) matchDirect(req *jsonrpc.Request) (*agent.Tool, json.RawMessage) {
	if req.Method != "tools/call" || !req.IsCall() || len(req.Params) == 0 || req.Params[0] != '{' {
		return nil, nil
	}
	var name, args []byte
	plain := true
	jsonscan.ForEachMember(req.Params, func(key, val []byte) {
		switch string(key) {
		case "name":
			name = val
		case "arguments":
			args = val
		case "_meta":
			// Only a trace context, and only with tracing on (tracing.go).
			plain = plain && s.acceptMeta(val)
		default:
			plain = false
		}
	})
	if !plain || (args != nil && args[0] != '{') {
		return nil, nil
	}
	t := s.toolNamed(name)
	if t == nil || s.requiredTasks[t.Name] {
		return nil, nil // unknown, or refused unless a task (taskMiddleware)
	}
	if q, ok := s.questions[t.Name]; ok && lacksArg(args, q.Arg) {
		return nil, nil // the SDK's path may ask the user (question.go)
	}
	return t, json.RawMessage(args)
}

// toolNamed is the tool a request's raw name (a JSON string) names, or nil.
func (s *Server) toolNamed(name []byte) *agent.Tool {
	if end, ascii := jsonscan.PlainStringEnd(name, 0); end == len(name) && ascii {
		// The name as is, looked up without making a string of it.
		return s.tools[string(name[1:end-1])]
	}
	if n, ok := jsonscan.String(name); ok {
		return s.tools[n]
	}
	return nil
}

// callDirect runs t and returns the encoded response to the request id.
func (s *Server) callDirect(ctx context.Context, id jsonrpc.ID, t *agent.Tool, args json.RawMessage, session string) []byte {
	s.taken.Add(1)
	out, res := s.runRecovered(ctx, t, args, session)
	if res == nil {
		if raw, ok := out.(json.RawMessage); ok && plainObject(raw) {
			return appendRawObjectResponse(nil, id, raw)
		}
		res = successResult(t.Name, out)
	}
	data, err := marshalResult(res)
	if err == nil {
		var enc []byte
		if enc, err = encodeMessage(nil, &jsonrpc.Response{ID: id, Result: data}); err == nil {
			return enc
		}
	}
	s.logger.Error("cannot encode a tool result", "tool", t.Name, "error", err)
	return appendErrorResponse(nil, id, jsonrpc.CodeInternalError,
		fmt.Sprintf("internal error while answering tools/call: the result of %s cannot be encoded", t.Name))
}

// runRecovered is execTool with recoverMiddleware's treatment of a panic:
// the direct path does not pass through the middleware.
func (s *Server) runRecovered(ctx context.Context, t *agent.Tool, args json.RawMessage, session string) (out any, res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			what := "tool " + t.Name
			logPanic(s.logger, "tools/call", what, p)
			out, res = nil, panicResult(what)
		}
	}()
	return execTool(ctx, t, args, session)
}

// appendRawObjectResponse appends the response to id for a tool whose
// output is raw, a JSON object for which plainObject holds: what
// successResult, marshalResult and encodeMessage make of it, in one buffer
// and without encoding anything again. A tool that keeps its results
// encoded (getOrderStatus's cache hands out what json.Marshal made) is
// answered at the cost of a copy: raw goes out as is as structuredContent,
// and as the text block's string with only its quotes and backslashes
// escaped, which is all json.Marshal escapes in such text.
func appendRawObjectResponse(dst []byte, id jsonrpc.ID, raw json.RawMessage) []byte {
	const (
		head = `{"jsonrpc":"2.0","id":`
		mid  = `,"result":{"content":[{"type":"text","text":"`
		sc   = `"}],"structuredContent":`
	)
	if dst == nil {
		dst = make([]byte, 0, len(head)+24+len(mid)+2*len(raw)+len(sc)+len(raw)+2)
	}
	dst = append(dst, head...)
	dst = appendID(dst, id)
	dst = append(dst, mid...)
	start := 0
	for i, c := range raw {
		if c == '"' || c == '\\' {
			dst = append(dst, raw[start:i]...)
			dst = append(dst, '\\', c)
			start = i + 1
		}
	}
	dst = append(dst, raw[start:]...)
	dst = append(dst, sc...)
	dst = append(dst, raw...)
	return append(dst, "}}"...)
}

// plainObject reports whether raw is a valid JSON object in valid UTF-8
// that encoding/json would copy unchanged (compactAndEscaped), the output
// appendRawObjectResponse takes. json.Marshal makes such text of any Go
// value that encodes as an object; anything else a tool returns goes the
// general way, where encoding/json rewrites it as the SDK's path does.
func plainObject(raw json.RawMessage) bool {
	return len(raw) > 0 && raw[0] == '{' && compactAndEscaped(raw) && utf8.Valid(raw) && rawObject(raw)
}

// rawObject reports whether raw is one valid JSON object, as isJSONObject
// does for text. Tools' results are checked on every call (successResult
// must not put invalid JSON in structuredContent), and most are flat
// objects of plain strings (getOrderStatus's are), which flatStringObject
// recognises in one pass at a fraction of json.Valid's cost; anything else
// goes to json.Valid.
func rawObject(raw []byte) bool {
	i := jsonscan.SkipSpace(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return false
	}
	return flatStringObject(raw, i) || json.Valid(raw)
}

// flatStringObject reports whether raw, from the brace at raw[i] on, is an
// object whose keys and values are all plain strings (see
// jsonscan.PlainStringEnd) in valid UTF-8, followed by nothing but white
// space. Such text is valid JSON; false says nothing either way.
func flatStringObject(raw []byte, i int) bool {
	i = jsonscan.SkipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return jsonscan.SkipSpace(raw, i+1) == len(raw)
	}
	ascii := true
	for {
		end, a := jsonscan.PlainStringEnd(raw, i)
		if end < 0 {
			return false
		}
		ascii = ascii && a
		i = jsonscan.SkipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(raw, i+1)
		if end, a = jsonscan.PlainStringEnd(raw, i); end < 0 {
			return false
		}
		ascii = ascii && a
		i = jsonscan.SkipSpace(raw, end)
		if i >= len(raw) {
			return false
		}
		if raw[i] == '}' {
			break
		}
		if raw[i] != ',' {
			return false
		}
		i = jsonscan.SkipSpace(raw, i+1)
	}
	return jsonscan.SkipSpace(raw, i+1) == len(raw) && (ascii || utf8.Valid(raw))
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

// isBatch reports whether a valid JSON line is an array (a batch).
func isBatch(line []byte) bool {
	i := jsonscan.SkipSpace(line, 0)
	return i < len(line) && line[i] == '['
}

// takeDirect answers msg on the direct path and reports true, or reports
// false for the SDK to handle it. Along the way it notes the initialize
// and server/discover requests (whose answers open the direct path, see
// noteAnswer) and passes cancellations of direct calls to them.
func (c *lineConn) takeDirect(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	switch req.Method {
	case "initialize":
		if req.IsCall() {
			c.initMu.Lock()
			c.initID = req.ID
			c.initMu.Unlock()
		}
		return false
	case methodDiscover:
		c.noteDiscover(req)
		return false
	case "notifications/cancelled":
		c.cancelDirect(req.Params)
		return false // the SDK logs it and ignores ids it does not know
	}
	if !c.srv.direct.Load() {
		return false
	}
	var t *agent.Tool
	var args json.RawMessage
	next := false
	if c.initialized.Load() {
		t, args = c.srv.matchDirect(req)
	} else if c.discovered.Load() {
		t, args = c.matchStdioNext(req)
		next = true
	}
	if t == nil {
		return false
	}
	ctx, cancel := context.WithCancel(c.sessionCtx)
	if !c.pending.startDirect(req.ID.Raw(), cancel) {
		// The client reused the id of a call still running; the SDK
		// decides what that means.
		cancel()
		return false
	}
	id, session := req.ID, c.toolSession
	if next {
		ctx = c.nextCallContext(ctx, session)
	}
	if c.srv.tracing != nil {
		c.startTraced(ctx, cancel, id, t, args, session, req.Params, next)
		return true
	}
	c.srv.workers.start(func() {
		resp := c.srv.callDirect(ctx, id, t, args, session)
		if next {
			resp = c.srv.nextGenResponse(resp, id)
		}
		// Answered even when the client cancelled it, as the SDK does;
		// only a closed connection gets nothing. The call ends (and the
		// end of the input stops waiting for it) once its answer has
		// been written.
		c.answerDirect(id.Raw(), resp, c.callCtx.Err() == nil)
		cancel()
	})
	return true
}

// cancelDirect cancels the direct call a notifications/cancelled names.
func (c *lineConn) cancelDirect(params json.RawMessage) {
	if id, ok := cancelledID(params); ok {
		c.pending.cancelDirect(id.Raw())
	}
}

// cancelledID is the id of the request the params of a
// notifications/cancelled name.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return jsonrpc.ID{}, false
	}
	var raw any
	if json.Unmarshal(p.RequestID, &raw) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(raw)
	return id, err == nil
}
