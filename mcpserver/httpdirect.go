package mcpserver

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/internal/rpcwire"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The direct path over streamable HTTP. As on the line transport (see
// Server), a plain tools/call for one of the server's tools is answered
// here, past the SDK: through the SDK, each POST goes from the connection's
// goroutine to the session's reader, to a goroutine of its own, to a warm
// worker and back, and its decoding leaves about 200 KB of garbage; with
// hundreds of sessions busy, those hand-offs were where requests waited
// (bench/NOTES.md). Here the call runs on the request's own goroutine and
// its answer is written as the SDK writes it for JSONResponse: the same
// status, headers and bytes (TestHTTPDirectMatchesSDK).
//
// Only what the SDK would certainly accept and answer that way is taken;
// everything else, and anything in doubt, goes to the SDK unchanged. The
// conditions are in serveDirect.

// directSession is what the direct path keeps of one HTTP session.
type directSession struct {
	// version is the protocol version the session negotiated, which a
	// request must name in its Mcp-Protocol-Version header to be taken;
	// "" if none may be.
	version string
	// toolSession keys the tools' idempotency rules, as callSession
	// names the session on the SDK's path.
	toolSession string
	// ctx ends with the session: its direct calls are cancelled then, as
	// the SDK cancels its own calls when a session closes.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	inFlight map[jsonrpc.ID]context.CancelFunc // the direct calls running, by id
	// viaSDK counts, by id, the calls passed to the SDK that are running:
	// a direct call may not share the id of one, as the SDK refuses a
	// call whose id is in flight on the session.
	viaSDK map[jsonrpc.ID]int
}

// init prepares d for session ss, whose initialize has been answered.
func (d *directSession) init(id string, ss *mcp.ServerSession) {
	d.toolSession = "mcp:" + id
	d.ctx, d.cancel = context.WithCancel(context.Background())
	if p := ss.InitializeParams(); p != nil && directVersion(p.ProtocolVersion) {
		// The SDK negotiates the client's version when it supports it.
		d.version = p.ProtocolVersion
	}
}

// end cancels the session's direct calls.
func (d *directSession) end() {
	if d.cancel != nil {
		d.cancel()
	}
}

// directVersion reports whether the direct path may take requests of
// protocol version v: one the SDK supports, before 2026-07-28 (whose
// requests carry their own protocol metadata and standard headers the SDK
// checks, and which a stateful server refuses).
func directVersion(v string) bool {
	return v != "" && v < "2026-07-28" && slices.Contains(mcp.SupportedProtocolVersions(), v)
}

// start registers a direct call's id and what cancels it, or reports
// false if a call with the same id is running on the session.
func (d *directSession) start(id jsonrpc.ID, cancel context.CancelFunc) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, dup := d.inFlight[id]; dup || d.viaSDK[id] > 0 {
		return false
	}
	if d.inFlight == nil {
		d.inFlight = make(map[jsonrpc.ID]context.CancelFunc)
	}
	d.inFlight[id] = cancel
	return true
}

// cancelCall cancels the direct call id, if one is running: what the
// SDK does with a notifications/cancelled for a call of its own.
func (d *directSession) cancelCall(id jsonrpc.ID) {
	d.mu.Lock()
	cancel := d.inFlight[id]
	d.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// passing notes that the call id goes to the SDK; passed, that its
// answer is written.
func (d *directSession) passing(id jsonrpc.ID) {
	d.mu.Lock()
	if d.viaSDK == nil {
		d.viaSDK = make(map[jsonrpc.ID]int)
	}
	d.viaSDK[id]++
	d.mu.Unlock()
}

func (d *directSession) passed(id jsonrpc.ID) {
	d.mu.Lock()
	if d.viaSDK[id]--; d.viaSDK[id] <= 0 {
		delete(d.viaSDK, id)
	}
	d.mu.Unlock()
}

func (d *directSession) finish(id jsonrpc.ID) {
	d.mu.Lock()
	delete(d.inFlight, id)
	d.mu.Unlock()
}

// Header values of a direct answer, shared: net/http only reads them.
var (
	directContentType  = []string{"application/json"}
	directCacheControl = []string{"no-cache, no-transform"}
)

// serveDirect answers the POST r with body (valid JSON) on session s and
// reports true, or reports false, having written nothing, for the SDK to
// serve it. It takes r only when all of these hold:
//
//   - the server's direct path is on (no caller middleware);
//   - the headers are those the SDK accepts: Content-Type application/json,
//     an Accept naming both application/json and text/event-stream, no
//     Last-Event-ID, and an Mcp-Protocol-Version that is the session's own
//     negotiated version (a missing or different one goes to the SDK);
//   - no OAuth token info rides on the request (the SDK ties a session to
//     its user);
//   - the body is one request, not a batch, that matchDirect accepts: a
//     plain tools/call of one of the server's tools.
//
// A notifications/cancelled that passes the same checks cancels the
// direct call it names on its way to the SDK, which knows nothing of it.
// A call that passes them but goes to the SDK is returned as sdkCall: the
// caller calls cs.direct.passed with it once the SDK has answered, and
// until then no direct call may take its id.
//
// The session's initialize has been answered (sessionCap knows a session
// only from then on), so the SDK would serve the call.
func (s *Server) serveDirect(w http.ResponseWriter, r *http.Request, cs *capSession, body []byte) (taken bool, sdkCall jsonrpc.ID) {
	d := &cs.direct
	if d.version == "" || !s.direct.Load() || r.Header.Get("Mcp-Protocol-Version") != d.version ||
		!directHeaders(r.Header) || auth.TokenInfoFromContext(r.Context()) != nil {
		return false, jsonrpc.ID{}
	}
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false, jsonrpc.ID{}
	}
	msg, _, problem := rpcwire.Decode(body[i:])
	if problem != "" {
		return false, jsonrpc.ID{}
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return false, jsonrpc.ID{}
	}
	if req.Method == "notifications/cancelled" {
		// The SDK, which gets it too, knows nothing of direct calls.
		if id, ok := cancelledID(req.Params); ok {
			d.cancelCall(id)
		}
		return false, jsonrpc.ID{}
	}
	t, args := s.matchDirect(req)
	if t == nil {
		if req.IsCall() {
			d.passing(req.ID)
			return false, req.ID
		}
		return false, jsonrpc.ID{}
	}
	h := w.Header()
	h["Cache-Control"] = directCacheControl
	h["Content-Type"] = directContentType
	// The call ends when the client goes away, cancels it or ends the
	// session.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	if !d.start(req.ID, cancel) {
		// As the SDK answers a call whose id is in flight on the session.
		w.WriteHeader(http.StatusBadRequest)
		w.Write(appendErrorResponse(nil, req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("duplicate in-flight request ID %v", req.ID.Raw())))
		return true, jsonrpc.ID{}
	}
	defer d.finish(req.ID)
	defer context.AfterFunc(d.ctx, cancel)()
	if s.tasks != nil {
		// As taskMiddleware names the caller on the SDK's path.
		ctx = context.WithValue(ctx, callerKey{}, headerCaller(r.Header, d.toolSession))
	}
	var resp []byte
	if s.tracing != nil {
		fields := traceFields(req.Params)
		if _, ok := fields[telemetry.MetaTraceparent]; !ok {
			// As tracingMiddleware: the traceparent header, if any.
			ctx = telemetry.ExtractHTTP(ctx, r.Header)
		}
		resp = s.tracedDirect(ctx, req.ID, t, args, d.toolSession, "tcp", fields)
	} else {
		resp = s.callDirect(ctx, req.ID, t, args, d.toolSession)
	}
	// Written even when the client has gone, as the SDK tries to.
	w.Write(resp)
	return true, jsonrpc.ID{}
}

// directHeaders reports whether the SDK's checks of a POST's headers
// (serveStatefulPOST, servePOST) pass: Content-Type, Accept, and no
// Last-Event-ID. The usual values are compared as they are; anything else
// is parsed as the SDK parses it.
func directHeaders(h http.Header) bool {
	if len(h["Last-Event-Id"]) > 0 {
		return false
	}
	if ct := h["Content-Type"]; len(ct) == 0 || ct[0] != "application/json" {
		if len(ct) == 0 {
			return false
		}
		if mt, _, err := mime.ParseMediaType(ct[0]); err != nil || mt != "application/json" {
			return false
		}
	}
	accept := h["Accept"]
	if len(accept) == 1 && accept[0] == "application/json, text/event-stream" {
		return true
	}
	jsonOK, streamOK := false, false
	for _, value := range accept {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(raw), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}
