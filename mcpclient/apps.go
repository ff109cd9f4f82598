package mcpclient

// MCP Apps (the io.modelcontextprotocol/ui extension): a tool may link an
// interactive view, a ui:// resource of AppMIMEType, through its
// _meta.ui.resourceUri. The bridge only advertises the extension and keeps
// each tool's _meta; rendering the view is the host's business (package
// web), which is why only a host that renders views asks for WithApps.

import (
	"context"
	"encoding/json"
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The extension's identifiers.
const (
	// AppsExtension is the key of the extension in the client's
	// capabilities.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of a view's HTML resource.
	AppMIMEType = "text/html;profile=mcp-app"
)

// WithApps advertises the MCP Apps extension in initialize, so that a
// server may link views to its tools. Give it only from a host that
// renders them: a server may then leave a tool's text result terse.
func WithApps() ConnectOption {
	return func(o *connectOptions) { o.apps = true }
}

// ToolMeta returns the _meta the server listed for the tool the bridge
// offers as name (a copy), or nil when it has none or no such tool.
func (b *Bridge) ToolMeta(name string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.tools.meta[name])
}

// ListedTool returns the tool the table calls name (its exposed name) as
// the server listed it, byte for byte, or nil when the server offers no
// such tool.
func (b *Bridge) ListedTool(name string) json.RawMessage {
	remote, ok := b.RemoteName(name)
	if !ok {
		return nil
	}
	c := b.current()
	if c == nil || c.capture == nil {
		return nil
	}
	c.capture.mu.Lock()
	defer c.capture.mu.Unlock()
	return c.capture.listed[remote]
}

type resultHookKey struct{}

// WithResultHook returns ctx carrying fn, which every tools/call run under
// it calls with the result as the server sent it (before it is mapped to
// what the model sees), and with the call's own context. A host that
// renders views needs that result: the model's text drops what a view
// shows (structuredContent, images). fn must not keep ctx, and must be
// safe for concurrent calls.
func WithResultHook(ctx context.Context, fn func(ctx context.Context, res *mcp.CallToolResult)) context.Context {
	return context.WithValue(ctx, resultHookKey{}, fn)
}

func resultHookFrom(ctx context.Context) func(context.Context, *mcp.CallToolResult) {
	fn, _ := ctx.Value(resultHookKey{}).(func(context.Context, *mcp.CallToolResult))
	return fn
}
