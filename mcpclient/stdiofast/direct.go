// Package stdiofast is the fast path of stdio MCP connections: a
// connection (Conn) over the frames supervise.FrameFilter decoded, and the
// direct tools/call path on it.
//
// The SDK's client decodes every tools/call result twice with its JSON
// package, and each decode allocates a 32 KiB buffer; on a stdio bridge
// that was most of the bytes a call allocated and a large share of its CPU
// (bench/NOTES.md). So the bridge sends tools/call itself on a stdio
// connection: the request goes out through Conn.Write, the SDK's own
// write path and lock, and its response is taken out of the connection's
// read path before the SDK sees it, with its result still raw, and decoded
// by decodeToolResult into what the SDK would have returned.
//
// What the SDK's ClientSession.CallTool does beyond the wire is kept or
// left to it: notifications (progress, logging, list changes) and the
// server's requests still reach the SDK's session, which reads the same
// connection; cancellation sends notifications/cancelled as the SDK does;
// a JSON-RPC error, a lost connection and an undecodable result give the
// errors the SDK gives. The tool lookup it does is for the headers of
// streamable HTTP only. On sessions of protocol 2026-07-28 or later the SDK
// adds per-request _meta: the direct calls add the same (modern.go). HTTP
// keeps the SDK's path, where the SDK owns the connection. A result that
// asks for input (inputRequests, resultType input_required) is answered by
// calling again through the SDK's path, which runs the multi-round-trip
// loop: such a result means the tool has not run yet.
package stdiofast

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// directIDPrefix starts the ids of the calls the bridge sends itself. The
// SDK's jsonrpc2 numbers its calls with integers, so a string id with this
// prefix can never be the answer to one of the SDK's calls.
const directIDPrefix = "agentapp-direct-"

// NewProtocolVersion is the first protocol version under which the SDK's
// client does more for a tools/call than send it and decode the answer.
const NewProtocolVersion = "2026-07-28"

// notifyCancelTimeout bounds the write of notifications/cancelled, as the
// SDK bounds its own.
const notifyCancelTimeout = 5 * time.Second

// DirectAllowed reports whether calls on s may take the direct path as
// they are, without the per-request _meta of NewProtocolVersion: the
// negotiated version is older (versions are dates, so they compare as
// strings, as the SDK compares them).
func DirectAllowed(s *mcp.ClientSession) bool {
	res := s.InitializeResult()
	return res != nil && res.ProtocolVersion < NewProtocolVersion
}

// directCalls tracks the direct calls of one connection that wait for
// their response.
type directCalls struct {
	mu      sync.Mutex
	next    int64
	pending map[string]chan *jsonrpc.Response
	ended   error // the read side's end: calls fail at once
}

// ErrNeedsSDK tells the bridge to make a call through the SDK's path.
var ErrNeedsSDK = errors.New("the call needs the SDK's path")

// register returns a fresh id and the channel its response will come on.
func (d *directCalls) register() (jsonrpc.ID, string, chan *jsonrpc.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended != nil {
		return jsonrpc.ID{}, "", nil, d.ended
	}
	d.next++
	key := directIDPrefix + strconv.FormatInt(d.next, 10)
	id, _ := jsonrpc.MakeID(key) // a string always makes an id
	ch := make(chan *jsonrpc.Response, 1)
	if d.pending == nil {
		d.pending = map[string]chan *jsonrpc.Response{}
	}
	d.pending[key] = ch
	return id, key, ch, nil
}

func (d *directCalls) forget(key string) {
	d.mu.Lock()
	delete(d.pending, key)
	d.mu.Unlock()
}

// deliver hands a response to its waiting direct call and reports whether
// msg was the answer to a direct call. An answer nobody waits for any more
// (its call was cancelled) is dropped, as the SDK drops answers it does
// not expect.
func (d *directCalls) deliver(msg jsonrpc.Message) bool {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	key, ok := resp.ID.Raw().(string)
	if !ok || !strings.HasPrefix(key, directIDPrefix) {
		return false
	}
	d.mu.Lock()
	ch := d.pending[key]
	delete(d.pending, key)
	d.mu.Unlock()
	if ch != nil {
		ch <- resp
	}
	return true
}

// end fails every waiting call with the read side's error, as the SDK's
// jsonrpc2 retires its calls when its reader stops, and makes later calls
// fail at once.
func (d *directCalls) end(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended != nil {
		return
	}
	// The SDK words a call made after its reader stopped like this.
	d.ended = fmt.Errorf("%w: calling %q: client is closing: %v", mcp.ErrConnectionClosed, "tools/call", err)
	for key, ch := range d.pending {
		ch <- &jsonrpc.Response{Error: err}
		delete(d.pending, key)
	}
}

// Sent is how many calls c has sent on the direct path.
func (c *Conn) Sent() int64 {
	c.direct.mu.Lock()
	defer c.direct.mu.Unlock()
	return c.direct.next
}

// CallTool sends tools/call on c and returns the decoded result, with the
// errors the SDK's ClientSession.CallTool returns in the same cases.
func (c *Conn) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if p == nil {
		p = new(mcp.CallToolParams)
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{} // as the SDK: no null arguments on the wire
	}
	params, err := marshalParams(p)
	if err != nil {
		return nil, fmt.Errorf("calling %q: marshaling call parameters: %w", "tools/call", err)
	}
	result, err := c.call(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	return decodeDirect(result)
}

// decodeDirect decodes the result of a direct tools/call; one that asks
// for input is ErrNeedsSDK.
func decodeDirect(result json.RawMessage) (*mcp.CallToolResult, error) {
	if result != nil {
		result = LiftLegacyToolResult(result)
	}
	res, err := decodeToolResult(result)
	if err != nil {
		return nil, fmt.Errorf("calling %q: %w", "tools/call", err)
	}
	if res.InputRequests != nil || res.NeedsInput() {
		return nil, ErrNeedsSDK
	}
	return res, nil
}

// call sends the request method with params on the direct path and waits
// for its raw result, with the errors the SDK's call gives.
func (c *Conn) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id, key, ch, err := c.direct.register()
	if err != nil {
		return nil, err
	}
	if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: params}); err != nil {
		c.direct.forget(key)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("calling %q: %w", method, err)
	}
	var resp *jsonrpc.Response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		c.direct.forget(key)
		c.notifyCancelled(ctx, key)
		return nil, ctx.Err()
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("calling %q: %w", method, resp.Error)
	}
	return resp.Result, nil
}

// notifyCancelled tells the server that the call key was cancelled, off
// the caller's return path (a server that does not read its stdin must not
// hold up the caller), with the SDK's reason: the context's error.
func (c *Conn) notifyCancelled(ctx context.Context, key string) {
	params, err := marshalParams(&mcp.CancelledParams{Reason: ctx.Err().Error(), RequestID: key})
	if err != nil {
		return
	}
	go func() {
		nctx, stop := context.WithTimeout(context.WithoutCancel(ctx), notifyCancelTimeout)
		defer stop()
		_ = c.Write(nctx, &jsonrpc.Request{Method: "notifications/cancelled", Params: params})
	}()
}

// marshalParams encodes params as the SDK's jsonrpc2 does: encoding/json
// without HTML escaping.
func marshalParams(params any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(params); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
