package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentapp/agentapp/mcpclient/internal/listing"
	"sync"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// OffersResources reports whether the server advertised resources when it
// (last) connected.
func (b *Bridge) OffersResources() bool { return b.side.resources.Offered() }

// OffersPrompts reports whether the server advertised prompts when it
// (last) connected.
func (b *Bridge) OffersPrompts() bool { return b.side.prompts.Offered() }

// Resources returns the server's resources from the last listing, listing
// them again first when it is stale (listing.Cache). A server without the
// resources capability has none.
func (b *Bridge) Resources(ctx context.Context) ([]*mcp.Resource, error) {
	return b.side.resources.Get(ctx, b.ListResources)
}

// Prompts returns the server's prompts like Resources.
func (b *Bridge) Prompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return b.side.prompts.Get(ctx, b.ListPrompts)
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
	hinted := !stdiofast.DirectAllowed(c.session)
	b.side.resources.Set(hasRes, hinted, nil)
	b.side.prompts.Set(hasPrompts, hinted, nil)
	var wg sync.WaitGroup
	if hasRes {
		wg.Go(func() {
			items, err := listing.All(ctx, b.name, "resources/list", b.opts.lists, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
				res, err := c.session.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Resources, res.NextCursor, nil
			})
			if err != nil {
				b.side.resources.MarkStale()
				b.opts.logger.Warn(fmt.Sprintf("MCP server %s advertises resources but listing them failed (%s); it is connected without them, and they are listed again when needed", b.name, safeText(err)))
				return
			}
			b.side.resources.Set(true, hinted, items)
		})
	}
	if hasPrompts {
		wg.Go(func() {
			items, err := listing.All(ctx, b.name, "prompts/list", b.opts.lists, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
				res, err := c.session.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return res.Prompts, res.NextCursor, nil
			})
			if err != nil {
				b.side.prompts.MarkStale()
				b.opts.logger.Warn(fmt.Sprintf("MCP server %s advertises prompts but listing them failed (%s); it is connected without them, and they are listed again when needed", b.name, safeText(err)))
				return
			}
			b.side.prompts.Set(true, hinted, items)
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
