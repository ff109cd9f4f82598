package mcpserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/internal/rpcwire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The direct path for protocol 2026-07-28 over HTTP. A request of that
// generation has no session: the SDK serves each on a stateless handler,
// which makes a session for it, checks its _meta and headers, and runs the
// call through the session's hand-offs (httpdirect.go says what those
// cost). A plain tools/call whose checks certainly pass is answered here
// instead, with the bytes the SDK's JSON answer has: the tool's result
// with the serverInfo _meta first and resultType "complete" last
// (TestHTTPDirectNextMatchesSDK). Anything else, or in doubt, goes to the
// SDK unchanged.

// serveDirectNext answers the POST r of protocol 2026-07-28 with body
// (valid JSON, else nil) and reports true, or reports false having written
// nothing. It takes r only when all of these hold:
//
//   - the server's direct path is on (no caller middleware) and tracing
//     is off;
//   - Content-Type, Accept and Last-Event-ID are as the SDK accepts them
//     (directHeaders); no OAuth token info rides on the request;
//   - Mcp-Protocol-Version is exactly 2026-07-28, Mcp-Method exactly
//     tools/call and Mcp-Name exactly the tool's name, each given once;
//   - the body is one request that matchDirectNext accepts.
func (s *Server) serveDirectNext(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if body == nil || s.serverInfoMeta == nil || !s.direct.Load() || s.tracing != nil || r.Method != http.MethodPost {
		return false
	}
	h := r.Header
	if v := h["Mcp-Protocol-Version"]; len(v) != 1 || v[0] != nextProtocolVersion {
		return false
	}
	if v := h["Mcp-Method"]; len(v) != 1 || v[0] != "tools/call" {
		return false
	}
	name := h["Mcp-Name"]
	if len(name) != 1 || !directHeaders(h) || auth.TokenInfoFromContext(r.Context()) != nil {
		return false
	}
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	msg, _, problem := rpcwire.Decode(body[i:])
	if problem != "" {
		return false
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false
	}
	t, args, ext := s.matchDirectNext(req, httpNextMeta)
	if t == nil || t.Name != name[0] {
		return false
	}
	caller := ""
	if s.tasks != nil {
		// As callerOf names a session-less request's caller: its token.
		caller = tokenCaller(h)
		if s.requiredTasks[t.Name] || ext && caller != "" && s.taskTools[t.Name] {
			return false // refused, or made a task, on the SDK's path
		}
	}
	ctx := r.Context()
	if caller != "" {
		ctx = context.WithValue(ctx, callerKey{}, caller)
	}
	// The SDK's session of one request: a name no other call has.
	resp := s.callDirect(ctx, req.ID, t, args, "mcp:"+rand.Text())
	hdr := w.Header()
	hdr["Cache-Control"] = directCacheControl
	hdr["Content-Type"] = directContentType
	w.Write(s.nextGenResponse(resp, req.ID))
	return true
}

// nextGenResponse turns a response of callDirect into the SDK's at
// 2026-07-28: the serverInfo _meta put first in the result, resultType
// "complete" last. An error response is left as it is.
func (s *Server) nextGenResponse(resp []byte, id jsonrpc.ID) []byte {
	const head, result = `{"jsonrpc":"2.0","id":`, `,"result":{`
	n := len(head) + len(appendID(nil, id))
	if len(resp) < n+len(result)+2 || !bytes.Equal(resp[n:n+len(result)], []byte(result)) {
		return resp
	}
	fields := resp[n+len(result) : len(resp)-2] // the result's members
	out := make([]byte, 0, len(resp)+len(s.serverInfoMeta)+32)
	out = append(out, resp[:n+len(result)]...)
	out = append(out, s.serverInfoMeta...)
	if len(fields) > 0 {
		out = append(out, ',')
		out = append(out, fields...)
	}
	return append(out, `,"resultType":"complete"}}`...)
}

// matchDirectNext is matchDirect for a request of 2026-07-28: its _meta
// holds exactly what that generation puts there, each valid as the SDK
// checks it (validateRequestMeta), and nothing else, as checkMeta
// (nextGenMeta, or the stdio path's cached form of it) reports; ext reports
// whether the client declared the tasks extension.
func (s *Server) matchDirectNext(req *jsonrpc.Request, checkMeta func(meta []byte) (ext, ok bool)) (t *agent.Tool, args json.RawMessage, ext bool) {
	if req.Method != "tools/call" || !req.IsCall() || len(req.Params) == 0 || req.Params[0] != '{' {
		return nil, nil, false
	}
	var name, meta []byte
	plain := true
	jsonscan.ForEachMember(req.Params, func(key, val []byte) {
		switch string(key) {
		case "name":
			name = val
		case "arguments":
			args = val
		case "_meta":
			meta = val
		default:
			plain = false
		}
	})
	if !plain || meta == nil || (args != nil && args[0] != '{') {
		return nil, nil, false
	}
	ext, ok := checkMeta(meta)
	if !ok {
		return nil, nil, false
	}
	if t = s.toolNamed(name); t == nil {
		return nil, nil, false
	}
	if q, ok := s.questions[t.Name]; ok && lacksArg(args, q.Arg) {
		return nil, nil, false // the SDK's path may ask the user (question.go)
	}
	return t, args, ext
}

// nextGenMeta reports whether a request's _meta is one the SDK takes
// without a word: the protocol version 2026-07-28, client capabilities
// that decode, and, if present, client info that does; nothing else (a
// progress token, a log level, a session name go to the SDK), but for
// the members allow accepts (nil: none). ext reports the tasks extension
// among the capabilities.
func nextGenMeta(meta []byte, allow func(key, val []byte) bool) (ext, ok bool) {
	if meta[0] != '{' {
		return false, false
	}
	var version, caps, info []byte
	ok = true
	jsonscan.ForEachMember(meta, func(key, val []byte) {
		switch string(key) {
		case mcp.MetaKeyProtocolVersion:
			version = val
		case mcp.MetaKeyClientCapabilities:
			caps = val
		case mcp.MetaKeyClientInfo:
			info = val
		default:
			ok = ok && allow != nil && allow(key, val)
		}
	})
	if !ok || string(version) != `"`+nextProtocolVersion+`"` || caps == nil || caps[0] != '{' {
		return false, false
	}
	if string(caps) != "{}" {
		var c struct {
			mcp.ClientCapabilities
			Roots *mcp.RootCapabilities `json:"roots,omitempty"`
		}
		if json.Unmarshal(caps, &c) != nil {
			return false, false
		}
		_, ext = c.Extensions[ExtTasks]
	}
	if info != nil {
		var impl mcp.Implementation
		if info[0] != '{' || json.Unmarshal(info, &impl) != nil {
			return false, false
		}
	}
	return ext, true
}

// httpNextMeta is nextGenMeta with nothing more allowed: over HTTP a log
// level asks for the request's own event stream (wantsStream).
func httpNextMeta(meta []byte) (ext, ok bool) { return nextGenMeta(meta, nil) }

// serverInfoMeta encodes the "_meta" member naming impl as the SDK
// encodes it in a result (annotateServerInfo, then the result's own
// MarshalJSON).
func serverInfoMeta(impl *mcp.Implementation) []byte {
	b, err := (&mcp.CallToolResult{Meta: mcp.Meta{mcp.MetaKeyServerInfo: impl}}).MarshalJSON()
	if err != nil {
		return nil
	}
	var meta []byte
	jsonscan.ForEachMember(b, func(key, val []byte) {
		if string(key) == "_meta" {
			meta = val
		}
	})
	if meta == nil {
		return nil
	}
	return append([]byte(`"_meta":`), meta...)
}
