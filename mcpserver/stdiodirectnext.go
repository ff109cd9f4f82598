package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The direct path for protocol 2026-07-28 on a line connection (stdio).
// A client of that generation sends server/discover instead of initialize,
// then every request with the version, its capabilities and its identity
// in _meta. The SDK checks that _meta on each request (validateRequestMeta)
// and answers with the serverInfo _meta and resultType "complete" in the
// result. The connection speaks 2026-07-28 once the SDK has answered a
// server/discover of that version without an error (its discover handler
// then records the session's parameters, so that no later request changes
// the session's state), and no initialize has been answered. From then on
// a plain tools/call whose _meta the SDK certainly accepts
// (matchDirectNext) is answered here, with the SDK's bytes
// (TestStdioDirectNextMatchesSDK); anything else, or in doubt (a progress
// token, a tool that may become a task), goes to the SDK unchanged.

// noteDiscover remembers the id of a server/discover call whose _meta asks
// for 2026-07-28 exactly: its successful answer opens the direct path of
// that generation (see noteAnswer).
func (c *lineConn) noteDiscover(req *jsonrpc.Request) {
	if !req.IsCall() || string(metaVersion(req.Params)) != `"`+nextProtocolVersion+`"` {
		return
	}
	c.initMu.Lock()
	c.discoverID = req.ID
	c.initMu.Unlock()
}

// metaVersion is the raw protocol version in the _meta of params, or nil.
func metaVersion(params []byte) []byte {
	if len(params) == 0 || params[0] != '{' {
		return nil
	}
	var version []byte
	jsonscan.ForEachMember(params, func(key, val []byte) {
		if string(key) != "_meta" || len(val) == 0 || val[0] != '{' {
			return
		}
		jsonscan.ForEachMember(val, func(k, v []byte) {
			if string(k) == mcp.MetaKeyProtocolVersion {
				version = v
			}
		})
	})
	return version
}

// noteAnswer opens the direct path when resp, a response the SDK is about
// to write, answers without an error the initialize request (any
// generation's calls without _meta) or the server/discover call noted
// above whose result lists 2026-07-28 (that generation's calls).
func (c *lineConn) noteAnswer(resp *jsonrpc.Response) {
	if resp.Error != nil || c.initialized.Load() {
		return
	}
	c.initMu.Lock()
	defer c.initMu.Unlock()
	switch {
	case c.initID.IsValid() && resp.ID == c.initID:
		c.initialized.Store(true)
	case c.discoverID.IsValid() && resp.ID == c.discoverID:
		// The SDK records the session's parameters only when the
		// transport serves a version of 2026-07-28 or later; the result
		// lists what it serves.
		if bytes.Contains(resp.Result, []byte(`"`+nextProtocolVersion+`"`)) {
			c.discovered.Store(true)
		}
	}
}

// matchStdioNext is matchDirectNext for a line connection that speaks
// 2026-07-28: the tool and arguments of a call to answer directly, or nil.
func (c *lineConn) matchStdioNext(req *jsonrpc.Request) (*agent.Tool, json.RawMessage) {
	s := c.srv
	if !c.discovered.Load() || c.initialized.Load() || s.serverInfoMeta == nil {
		return nil, nil
	}
	t, args, ext := s.matchDirectNext(req, c.checkNextMeta)
	if t == nil {
		return nil, nil
	}
	// On a line connection the caller is the session (callerOf), so a
	// task tool called by a client that declared the extension becomes a
	// task, and a tool that runs only as a task is refused: the SDK's
	// path does both.
	if s.tasks != nil && (s.requiredTasks[t.Name] || ext && s.taskTools[t.Name]) {
		return nil, nil
	}
	return t, args
}

// maxKeptMeta bounds the _meta a connection keeps to recognise the next
// call's (see checkNextMeta).
const maxKeptMeta = 4 << 10

// checkNextMeta is nextGenMeta with nextMetaAllowed's members too. A
// client puts the same _meta in every call, so the last one that passed is
// kept and a call whose _meta has the same bytes is not decoded again.
// Only the reader goroutine calls it (takeDirect).
func (c *lineConn) checkNextMeta(meta []byte) (ext, ok bool) {
	if c.nextMeta != nil && bytes.Equal(meta, c.nextMeta) {
		return c.nextMetaExt, true
	}
	if ext, ok = nextGenMeta(meta, c.nextMetaAllowed); ok && len(meta) <= maxKeptMeta {
		c.nextMeta, c.nextMetaExt = bytes.Clone(meta), ext
	}
	return ext, ok
}

// nextMetaAllowed accepts, besides the keys of 2026-07-28, a log level as
// a string: it only filters the log messages the SDK would send during the
// call, and this server sends none (nor does a line connection frame the
// answer differently, as HTTP does). With tracing on it accepts the trace
// context too, as acceptMeta does for the older generation: tracedDirect
// continues it.
func (c *lineConn) nextMetaAllowed(key, val []byte) bool {
	if len(val) == 0 || val[0] != '"' {
		return false
	}
	return string(key) == mcp.MetaKeyLogLevel || c.srv.tracing != nil && telemetry.IsTraceKey(string(key))
}

// nextCallContext is ctx as the SDK's path gives it to a tool called at
// 2026-07-28: taskMiddleware names the caller of every request it sees,
// the session on a line connection.
func (c *lineConn) nextCallContext(ctx context.Context, session string) context.Context {
	if c.srv.tasks != nil {
		return context.WithValue(ctx, callerKey{}, session)
	}
	return ctx
}
