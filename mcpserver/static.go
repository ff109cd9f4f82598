package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// StaticResource is a resource whose text is fixed for the server's life,
// compiled into the binary: an MCP Apps view (a ui:// resource of MIME
// type text/html;profile=mcp-app) is one. Hosts read it once per tool
// they render, so it is listed and read like any resource, with its _meta
// both in resources/list and on the contents, where MCP Apps hosts look
// for the view's CSP and border preference.
type StaticResource struct {
	URI, Name, Title, Description, MIMEType string
	// Text is the whole content; or Blob, when not nil, is (binary,
	// sent base64-encoded as the contents' blob).
	Text string
	Blob []byte
	// Meta is the resource's _meta; nil sends none.
	Meta map[string]any
}

// listed is r as resources/list shows it.
func (r *StaticResource) listed() *mcp.Resource {
	return &mcp.Resource{
		URI:         r.URI,
		Name:        r.Name,
		Title:       r.Title,
		Description: r.Description,
		MIMEType:    r.MIMEType,
		Size:        int64(max(len(r.Text), len(r.Blob))),
		Meta:        r.Meta,
	}
}

// readHandler answers resources/read for r. The SDK calls it only for r's
// exact URI.
func (r *StaticResource) readHandler() mcp.ResourceHandler {
	return func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI:      r.URI,
			MIMEType: r.MIMEType,
			Text:     r.Text,
			Blob:     r.Blob,
			Meta:     r.Meta,
		}}}, nil
	}
}

// addStatic registers opts.Resources and opts.ToolMeta. Like a bad tool,
// a resource without a URI or name, a URI listed twice, a URI in the
// documents' scheme, or _meta for a tool that is not published is a
// programming error, and New panics.
func (s *Server) addStatic(opts *Options) {
	seen := make(map[string]bool, len(opts.Resources))
	for i := range opts.Resources {
		r := &opts.Resources[i]
		switch {
		case r.URI == "" || r.Name == "":
			panic("mcpserver.New: a static resource has no URI or no name")
		case seen[r.URI]:
			panic(fmt.Sprintf("mcpserver.New: resource %q is listed twice", r.URI))
		case strings.HasPrefix(r.URI, DocURIPrefix):
			panic(fmt.Sprintf("mcpserver.New: resource %q is in the documents' scheme", r.URI))
		}
		seen[r.URI] = true
		s.static = append(s.static, r.listed())
		s.mcp.AddResource(r.listed(), r.readHandler())
	}
	for name := range opts.ToolMeta {
		if s.tools[name] == nil {
			panic(fmt.Sprintf("mcpserver.New: _meta given for %q, which is not a published tool", name))
		}
	}
}
