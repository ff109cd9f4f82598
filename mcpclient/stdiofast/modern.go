package stdiofast

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Under protocol 2026-07-28 every request carries in its _meta the protocol
// version, the client's capabilities and its info, which the SDK's
// ClientSession adds to each request it sends (and the bridge's log level,
// which a middleware of the bridge adds). They are the same for every
// request of a session, so the direct path takes them, byte for byte, from
// the first request the SDK writes on the connection after the handshake
// (the connect's tools/list), and puts them in its own tools/call as the SDK
// would: a key the call set itself is kept. Until then (or on a session
// that does not have them) a 2026-07-28 call takes the SDK's path.

// sessionMetaKeys are the _meta keys that are the same for every request of
// a 2026-07-28 session.
var sessionMetaKeys = []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities, mcp.MetaKeyLogLevel}

// sessionMeta holds the recorded keys (nil until recorded).
type sessionMeta = atomic.Pointer[recordedMeta]

// recordedMeta is a session's _meta keys, and the object of them encoded
// (sorted, as encoding/json encodes a map) for the calls with no _meta of
// their own.
type recordedMeta struct {
	keys map[string]json.RawMessage
	json []byte
}

// recordMeta records the session's _meta keys from a request the SDK
// writes, once: the first call after the handshake whose _meta has the
// protocol version.
func (c *Conn) recordMeta(msg jsonrpc.Message) {
	if c.meta.Load() != nil {
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || req.Method == "server/discover" || req.Method == "initialize" ||
		!bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		return
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) != nil || p.Meta[mcp.MetaKeyProtocolVersion] == nil {
		return
	}
	kept := map[string]json.RawMessage{}
	for _, k := range sessionMetaKeys {
		if v, ok := p.Meta[k]; ok {
			kept[k] = v
		}
	}
	enc, err := marshalParams(kept)
	if err != nil {
		return
	}
	c.meta.CompareAndSwap(nil, &recordedMeta{keys: kept, json: enc})
}

// HasSessionMeta reports whether c has recorded the _meta of a 2026-07-28
// session, so that its direct calls can carry it.
func (c *Conn) HasSessionMeta() bool { return c.meta.Load() != nil }

// withSessionMeta returns the params p encoded with the session's _meta
// keys added to its own, or ErrNeedsSDK before they were recorded.
func (c *Conn) withSessionMeta(p *mcp.CallToolParams) (json.RawMessage, error) {
	rec := c.meta.Load()
	if rec == nil {
		return nil, ErrNeedsSDK
	}
	if len(p.Meta) == 0 {
		// _meta is the first member, as the SDK encodes the params.
		rest, err := marshalParams(&mcp.CallToolParams{Name: p.Name, Arguments: p.Arguments})
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(`{"_meta":,`)+len(rec.json)+len(rest))
		out = append(append(append(out, `{"_meta":`...), rec.json...), ',')
		return append(out, rest[1:]...), nil
	}
	meta := make(map[string]any, len(p.Meta)+len(rec.keys))
	for k, v := range p.Meta {
		meta[k] = v
	}
	for k, v := range rec.keys {
		if _, ok := meta[k]; !ok || k == mcp.MetaKeyLogLevel {
			// The bridge's log level replaces one the call set, as its
			// middleware does on the SDK's path.
			meta[k] = v
		}
	}
	cp := *p
	cp.Meta = meta
	return marshalParams(&cp)
}

// CallToolModern is CallTool on a session of protocol 2026-07-28: the call
// carries the session's _meta (ErrNeedsSDK until it is known), and a result
// that asks for input is ErrNeedsSDK, for the SDK's multi-round-trip loop.
func (c *Conn) CallToolModern(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	raw, err := c.CallToolRaw(ctx, p)
	if err != nil {
		return nil, err
	}
	return decodeDirect(raw)
}

// CallToolRaw sends tools/call with p and the session's _meta (2026-07-28)
// on the direct path and returns the result undecoded, for a caller that
// reads a result of its own kind first (the tasks extension's task).
func (c *Conn) CallToolRaw(ctx context.Context, p *mcp.CallToolParams) (json.RawMessage, error) {
	if p == nil {
		p = new(mcp.CallToolParams)
	}
	if p.Arguments == nil {
		p.Arguments = map[string]any{}
	}
	params, err := c.withSessionMeta(p)
	if err != nil {
		return nil, err
	}
	return c.call(ctx, "tools/call", params)
}

// DecodeToolResult decodes a raw tools/call result into what the SDK's
// decoder gives, with its errors; a result that asks for input is
// ErrNeedsSDK.
func DecodeToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := decodeToolResult(raw)
	if err != nil {
		return nil, err
	}
	if res.InputRequests != nil || res.NeedsInput() {
		return nil, ErrNeedsSDK
	}
	return res, nil
}

// ResultType returns the kind of a raw result (its top-level resultType:
// "task", "input_required", "complete"), reading only the top level; ""
// when it has none or it is not a plain string. The JSON is the SDK's to
// validate when the result is decoded.
func ResultType(raw []byte) string {
	var rt string
	if !bytes.Contains(raw, []byte(`"resultType"`)) {
		return "" // the common case before 2026-07-28, without a scan
	}
	eachMember(raw, func(key, val []byte) (uint16, bool) {
		if string(key) == "resultType" {
			rt, _ = decodeString(val)
		}
		return 0, true
	})
	return rt
}
