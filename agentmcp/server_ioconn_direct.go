package agentmcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// isBatch reports whether a valid JSON line is an array (a batch).
func isBatch(line []byte) bool {
	i := skipSpace(line, 0)
	return i < len(line) && line[i] == '['
}

// takeDirect answers msg on the direct path and reports true, or reports
// false for the SDK to handle it. Along the way it notes the initialize
// request (whose answer opens the direct path) and passes cancellations
// of direct calls to them.
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
	case "notifications/cancelled":
		c.cancelDirect(req.Params)
		return false // the SDK logs it and ignores ids it does not know
	}
	if !c.initialized.Load() {
		return false
	}
	t, args := c.direct.match(req)
	if t == nil {
		return false
	}
	key := req.ID.Raw()
	c.callsMu.Lock()
	if _, dup := c.calls[key]; dup {
		// The client reused the id of a call still running; the SDK
		// decides what that means.
		c.callsMu.Unlock()
		return false
	}
	ctx, cancel := context.WithCancel(c.callCtx)
	c.calls[key] = cancel
	c.callsMu.Unlock()

	id, session := req.ID, "mcp:"+c.sessionID
	c.direct.workers.start(func() {
		resp := c.direct.call(ctx, id, t, args, session)
		if c.callCtx.Err() == nil {
			// Answered even when the client cancelled it, as the SDK
			// does; only a closed connection gets nothing.
			_ = c.writeLine(resp)
		}
		// Only now is the call done: waitForDirectCalls lets the end of
		// the input through once the answer is written.
		c.callsMu.Lock()
		delete(c.calls, key)
		if len(c.calls) == 0 && c.callsIdle != nil {
			close(c.callsIdle)
			c.callsIdle = nil
		}
		c.callsMu.Unlock()
		cancel()
	})
	return true
}

// cancelDirect cancels the direct call a notifications/cancelled names.
func (c *lineConn) cancelDirect(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return
	}
	var raw any
	if json.Unmarshal(p.RequestID, &raw) != nil {
		return
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil {
		return
	}
	c.callsMu.Lock()
	cancel := c.calls[id.Raw()]
	c.callsMu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// waitForDirectCalls holds back the end of the input until the direct
// calls in flight have been answered, for the reason DrainingTransport
// gives, within the same DefaultDrainTimeout.
func (c *lineConn) waitForDirectCalls(ctx context.Context) {
	c.callsMu.Lock()
	if len(c.calls) == 0 {
		c.callsMu.Unlock()
		return
	}
	if c.callsIdle == nil {
		c.callsIdle = make(chan struct{})
	}
	idle := c.callsIdle
	c.callsMu.Unlock()
	timer := time.NewTimer(DefaultDrainTimeout)
	defer timer.Stop()
	select {
	case <-idle:
	case <-timer.C:
	case <-ctx.Done():
	case <-c.closed:
	}
}
