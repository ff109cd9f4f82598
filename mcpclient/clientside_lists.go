package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listCache keeps a server's last listing of resources or prompts, so
// that the chat's commands and completions do not ask the server each
// time; notifications/…/list_changed (or a restart) marks it stale and the
// next read lists again.
type listCache struct {
	stale   atomic.Bool
	mu      sync.Mutex
	loaded  bool
	offered bool // the server advertises the capability
	items   any  // []*mcp.Resource or []*mcp.Prompt
}

func (l *listCache) set(offered bool, items any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offered, l.items, l.loaded = offered, items, true
	l.stale.Store(false)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// OffersResources reports whether the server advertised resources when it
// (last) connected.
func (b *Bridge) OffersResources() bool {
	b.side.resources.mu.Lock()
	defer b.side.resources.mu.Unlock()
	return b.side.resources.offered
}

// OffersPrompts reports whether the server advertised prompts when it
// (last) connected.
func (b *Bridge) OffersPrompts() bool {
	b.side.prompts.mu.Lock()
	defer b.side.prompts.mu.Unlock()
	return b.side.prompts.offered
}

// Resources returns the server's resources from the last listing, listing
// them again first when the server announced a change (or has not been
// listed yet). A server without the resources capability has none.
func (b *Bridge) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	return cached(ctx, &b.side.resources, b.ListResources)
}

// Prompts returns the server's prompts like Resources.
func (b *Bridge) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return cached(ctx, &b.side.prompts, b.ListPrompts)
}

func cached[T any](ctx context.Context, l *listCache, list func(context.Context) ([]*T, error)) ([]*T, error) {
	l.mu.Lock()
	if !l.offered {
		l.mu.Unlock()
		return nil, nil
	}
	if l.loaded && !l.stale.Load() {
		items, _ := l.items.([]*T)
		l.mu.Unlock()
		return items, nil
	}
	l.mu.Unlock()
	// Cleared before listing, so a change announced during the listing
	// is not lost.
	l.stale.Store(false)
	items, err := list(ctx)
	if err != nil {
		l.stale.Store(true)
		return nil, err
	}
	l.mu.Lock()
	l.items, l.loaded = items, true
	l.mu.Unlock()
	return items, nil
}

// catalogConnectTimeout bounds listing resources and prompts while
// connecting (the call timeout does when it is shorter).
const catalogConnectTimeout = 10 * time.Second

// listCatalog lists the resources and prompts of a freshly connected
// server that advertises them, both at once. A listing that fails does not
// fail the connection (the server's tools still work): it is a warning,
// and the list is tried again when it is next needed. Each listing has a
// bound of its own, so a catalog that hangs costs the connection seconds,
// not its whole timeout.
func (b *Bridge) listCatalog(ctx context.Context, c *conn) {
	ctx, cancel := context.WithTimeout(ctx, min(catalogConnectTimeout, b.callTimeout()))
	defer cancel()
	var caps *mcp.ServerCapabilities
	if ir := c.session.InitializeResult(); ir != nil {
		caps = ir.Capabilities
	}
	hasRes := caps != nil && caps.Resources != nil
	hasPrompts := caps != nil && caps.Prompts != nil
	b.side.resources.set(hasRes, []*mcp.Resource(nil))
	b.side.prompts.set(hasPrompts, []*mcp.Prompt(nil))
	var wg sync.WaitGroup
	if hasRes {
		wg.Go(func() {
			items, err := listAll(ctx, b.name, "resources/list", b.opts.lists, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
				res, err := c.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Resources, res.NextCursor, nil
			})
			if err != nil {
				b.side.resources.stale.Store(true)
				b.opts.logger.Warn(fmt.Sprintf("MCP server %s advertises resources but listing them failed (%s); it is connected without them, and they are listed again when needed", b.name, safeText(err)))
				return
			}
			b.side.resources.set(true, items)
		})
	}
	if hasPrompts {
		wg.Go(func() {
			items, err := listAll(ctx, b.name, "prompts/list", b.opts.lists, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
				res, err := c.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Prompts, res.NextCursor, nil
			})
			if err != nil {
				b.side.prompts.stale.Store(true)
				b.opts.logger.Warn(fmt.Sprintf("MCP server %s advertises prompts but listing them failed (%s); it is connected without them, and they are listed again when needed", b.name, safeText(err)))
				return
			}
			b.side.prompts.set(true, items)
		})
	}
	wg.Wait()
}

// GetPrompt gets the prompt name with args from the server (prompts/get),
// bounded like every request.
func (b *Bridge) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	what := fmt.Sprintf("getting prompt %s from MCP server %s", textsafe.Preview(name, 100), b.name)
	return request(ctx, b, what, func(ctx context.Context, s *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return s.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args})
	})
}
