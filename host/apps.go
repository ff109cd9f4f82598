package host

// MCP Apps on the host's side: which tools link a view (a ui:// resource
// the web page renders), which tools the model may see, and the calls a
// view makes back to its own server. The rendering itself is package
// web's; the terminal only says that a view exists.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolMetaServer is a Server that keeps the _meta of its tools
// (*mcpclient.Bridge).
type toolMetaServer interface {
	Server
	ToolMeta(name string) map[string]any
}

// ToolUI is a tool's _meta.ui: the view it links and who may call it.
type ToolUI struct {
	// ResourceURI is the ui:// resource of the tool's view; empty when the
	// tool has none.
	ResourceURI string `json:"resourceUri,omitempty"`
	// Visibility lists who may call the tool: "model", "app" or both. The
	// extension's default, when the server says nothing, is both.
	Visibility []string `json:"visibility,omitempty"`
}

// maxURILen bounds a resource URI taken from a server.
const maxURILen = 2048

// parseToolUI reads a tool's _meta: the "ui" object, or the older flat
// "ui/resourceUri" key. A malformed entry counts as absent (the tool is
// then an ordinary tool, visible to the model), and a resourceUri that is
// not ui:// is ignored, since only ui:// resources are views.
func parseToolUI(meta map[string]any) ToolUI {
	var u ToolUI
	if ui, ok := meta["ui"].(map[string]any); ok {
		u.ResourceURI, _ = ui["resourceUri"].(string)
		if vis, ok := ui["visibility"].([]any); ok {
			for _, v := range vis {
				if s, ok := v.(string); ok && (s == "model" || s == "app") && !slices.Contains(u.Visibility, s) {
					u.Visibility = append(u.Visibility, s)
				}
			}
			if u.Visibility == nil {
				u.Visibility = []string{} // a list naming nobody: neither may call it
			}
		}
	}
	if u.ResourceURI == "" {
		u.ResourceURI, _ = meta["ui/resourceUri"].(string)
	}
	if !strings.HasPrefix(u.ResourceURI, "ui://") || len(u.ResourceURI) > maxURILen {
		u.ResourceURI = ""
	}
	return u
}

// forModel reports whether the model may be offered the tool.
func (u ToolUI) forModel() bool { return u.Visibility == nil || slices.Contains(u.Visibility, "model") }

// ForApp reports whether a view may call the tool.
func (u ToolUI) ForApp() bool { return u.Visibility == nil || slices.Contains(u.Visibility, "app") }

// toolUI is the UI metadata of the tool s offers as name.
func toolUI(s Server, name string) ToolUI {
	if ms, ok := s.(toolMetaServer); ok {
		return parseToolUI(ms.ToolMeta(name))
	}
	return ToolUI{}
}

// modelTools drops from tools (of s) those whose visibility keeps them
// from the model: a view's tools only.
func modelTools(s Server, tools []*agent.Tool) []*agent.Tool {
	out := tools[:0:0]
	for _, t := range tools {
		if t == nil || toolUI(s, t.Name).forModel() {
			out = append(out, t)
		}
	}
	return out
}

// ToolUIOf returns the UI metadata of the tool a running server offers as
// name, and false when no running server of that name offers it.
func (h *Host) ToolUIOf(server, name string) (ToolUI, bool) {
	s, t := h.findTool(server, name)
	if t == nil {
		return ToolUI{}, false
	}
	return toolUI(s, name), true
}

func (h *Host) findTool(server, name string) (Server, *agent.Tool) {
	for _, s := range h.table.Servers() {
		if s.Name() != server {
			continue
		}
		for _, t := range s.Tools() {
			if t != nil && t.Name == name {
				return s, t
			}
		}
		return s, nil
	}
	return nil, nil
}

// appCallError refuses a view's call before it reaches a server.
type appCallError struct{ msg string }

func (e *appCallError) Error() string { return e.msg }

// CallFromApp runs a tool for a view that server rendered: only that
// server's tools, only those whose visibility lets a view call them, and
// through the same guards as the model's calls (allowlist, injection scan,
// confirmation, rate limits), conf asking about it when the guards
// confirm it. It returns the tool's output as the model would see it, or
// an error: an *appCallError for a refused call, the tool's own error
// otherwise.
func (h *Host) CallFromApp(ctx context.Context, server, name string, args json.RawMessage, conf guard.Confirmer) (any, error) {
	s, t := h.findTool(server, name)
	switch {
	case s == nil:
		return nil, &appCallError{fmt.Sprintf("no MCP server named %q is running, so its view cannot call it", server)}
	case t == nil:
		return nil, &appCallError{fmt.Sprintf("MCP server %q offers no tool named %q; a view may call only its own server's tools", server, name)}
	}
	if !toolUI(s, name).ForApp() {
		return nil, &appCallError{fmt.Sprintf("tool %q of MCP server %q is not visible to views (its _meta.ui.visibility lacks \"app\"), so a view may not call it", name, server)}
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return h.Call(ctx, guard.Wrap(t, h.guards), args, conf)
}

// callConfirmer keys the confirmer of a call made outside a turn (Call):
// the host's own confirmer finds it there, the front end hands it over.
type callConfirmer struct{}

// Call runs a tool of the table outside a turn (the terminal's /call, a
// view's call), conf asking about it when the guards confirm it. The
// hooks run as around a model's call (PreToolUse, PermissionRequest,
// PostToolUse): a policy written as hooks has no way around it.
func (h *Host) Call(ctx context.Context, t *agent.Tool, args json.RawMessage, conf guard.Confirmer) (any, error) {
	return h.hookedTool(t).Execute(context.WithValue(ctx, callConfirmer{}, conf), args)
}

// ReadForApp reads a resource of server for a view that server rendered
// (the view's HTML, or a resource the view asks for).
func (h *Host) ReadForApp(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	for _, s := range h.table.Servers() {
		if s.Name() != server {
			continue
		}
		c, ok := s.(Catalog)
		if !ok {
			return nil, &appCallError{fmt.Sprintf("MCP server %q cannot read resources", server)}
		}
		return c.ReadResource(ctx, uri)
	}
	return nil, &appCallError{fmt.Sprintf("no MCP server named %q is running", server)}
}

// IsAppCallError reports whether err is a refusal of CallFromApp or
// ReadForApp.
func IsAppCallError(err error) bool {
	var e *appCallError
	return errors.As(err, &e)
}
