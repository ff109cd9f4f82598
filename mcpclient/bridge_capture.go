package mcpclient

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capture records what the SDK would otherwise lose from the server's
// messages: the raw bytes of every tool's inputSchema and outputSchema from
// tools/list (the SDK decodes them into maps, losing key order and number
// spelling), and legacy toolResult values of tools/call.
//
// It is a connection wrapper, so it works the same for stdio, HTTP and
// in-memory transports. A later tools/list (a refresh after
// notifications/tools/list_changed) simply overwrites the entries.
type capture struct {
	mu      sync.Mutex
	pending map[jsonrpc.ID]string // call id → method, for tools/list and tools/call
	input   map[string]json.RawMessage
	output  map[string]json.RawMessage
	// listed is each tool's object as the server listed it, for
	// `agentapp mcp tools` (the SDK drops what it does not know, such
	// as execution.taskSupport).
	listed map[string]json.RawMessage
	// taskSupport and tasks: tasks.go.
	taskSupport map[string]string
	tasks       taskCapabilities
	// serving runs the server's task requests (tasks.Requests); nil
	// when we run none.
	serving *tasks.Requests
	// status wakes the task waits a notifications/tasks/status names.
	status tasks.Wakers
}

func newCapture() *capture {
	return &capture{
		pending: map[jsonrpc.ID]string{},
		input:   map[string]json.RawMessage{},
		output:  map[string]json.RawMessage{},
		listed:  map[string]json.RawMessage{},
	}
}

// schemas returns the raw input and output schemas last seen for a tool.
func (c *capture) schemas(tool string) (in, out json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.input[tool], c.output[tool]
}

// resetTools forgets the schemas recorded so far, before a new listing:
// the tools a server no longer offers must not keep their schemas for the
// life of the connection.
func (c *capture) resetTools() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.input)
	clear(c.output)
	clear(c.listed)
	clear(c.taskSupport)
}

func (c *capture) expect(id jsonrpc.ID, method string) {
	c.mu.Lock()
	c.pending[id] = method
	c.mu.Unlock()
}

func (c *capture) take(id jsonrpc.ID) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.pending[id]
	delete(c.pending, id)
	return m
}

func (c *capture) recordTools(result json.RawMessage) {
	var page struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return // the SDK reports the malformed result
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordTaskSupport(result)
	for _, raw := range page.Tools {
		var t struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue // the SDK reports the malformed tool
		}
		c.input[t.Name] = t.InputSchema
		c.output[t.Name] = t.OutputSchema
		c.listed[t.Name] = raw
	}
}

// captureTransport wraps a transport so that its connection feeds a capture.
type captureTransport struct {
	inner mcp.Transport
	cap   *capture
}

func (t *captureTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &captureConn{Connection: conn, cap: t.cap}, nil
}

type captureConn struct {
	mcp.Connection
	cap *capture
}

func (c *captureConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	msg = tasks.RenameCall(msg)
	if rt := c.cap.serving; rt != nil {
		switch m := msg.(type) {
		case *jsonrpc.Response:
			if rt.Finish(m) {
				return nil // the result of a task the server polls for
			}
		case *jsonrpc.Request:
			if m.Method == "initialize" {
				if p, ok := rt.WithCapability(m.Params); ok {
					cp := *m
					cp.Params = p
					msg = &cp
				}
			}
		}
	}
	req, ok := msg.(*jsonrpc.Request)
	watch := ok && req.IsCall() && (req.Method == "tools/list" || req.Method == "tools/call" || req.Method == "initialize")
	if watch {
		// Registered before the write: the answer may arrive before Write returns.
		c.cap.expect(req.ID, req.Method)
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil && watch {
		c.cap.take(req.ID)
	}
	return err
}

func (c *captureConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return msg, err
		}
		if req, ok := msg.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == "notifications/tasks/status" {
			// The SDK knows no such notification: it is ours to act on
			// (taskRun fetches at once instead of at its next poll).
			c.cap.status.Notified(req.Params)
			continue
		}
		if rt := c.cap.serving; rt != nil {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				if next, handled := c.serveTask(rt, req); handled {
					if next == nil {
						continue
					}
					msg = next
				}
			}
		}
		return c.read(msg)
	}
}

// serveTask handles a request of the server that concerns the tasks we
// run for it: it answers it, and returns what the SDK must get instead
// (nil: nothing).
func (c *captureConn) serveTask(rt *tasks.Requests, req *jsonrpc.Request) (jsonrpc.Message, bool) {
	// A failed write means the connection is gone, which the server sees.
	send := func(resp *jsonrpc.Response) { _ = tasks.WriteDetached(c.Connection, resp) }
	switch {
	case rt.RunsAsTask(req) && tasks.HasTask(req.Params):
		forSDK, answer := rt.Start(req)
		send(answer)
		if forSDK == nil {
			return nil, true
		}
		return forSDK, true
	case tasks.IsMethod(req.Method):
		resp, cancelSDK := rt.Answer(req, send)
		if resp != nil {
			send(resp)
		}
		if cancelSDK != nil {
			return cancelSDK, true
		}
		return nil, true
	}
	return nil, false
}

func (c *captureConn) Close() error {
	c.cap.serving.Close()
	return c.Connection.Close()
}

func (c *captureConn) read(msg jsonrpc.Message) (jsonrpc.Message, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || !resp.ID.IsValid() {
		return msg, nil
	}
	switch c.cap.take(resp.ID) {
	case "tools/list":
		if resp.Result != nil {
			c.cap.recordTools(resp.Result)
		}
	case "tools/call":
		if resp.Result != nil {
			resp.Result = stdiofast.LiftLegacyToolResult(resp.Result)
		}
	case "initialize":
		if resp.Result != nil {
			c.cap.recordInit(resp.Result)
		}
	}
	return msg, nil
}
