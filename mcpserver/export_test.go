package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// DirectTaken reports how many calls the direct path has answered.
func (s *Server) DirectTaken() int64 { return s.taken.Load() }

// ToolHandler returns the SDK-path handler of the named tool.
func (s *Server) ToolHandler(name string) mcp.ToolHandler { return s.toolHandler(s.tools[name]) }

// The handshake of the raw-line tests and golden transcripts.
const (
	InitializeLine  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"golden","version":"1"}}}`
	InitializedLine = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// NewWithSDKAddTool is New registering each tool with the SDK's own
// AddTool (its re-marshalling included), the reference addTool is held to.
func NewWithSDKAddTool(opts *Options) *Server { return newServer(opts, (*mcp.Server).AddTool) }
