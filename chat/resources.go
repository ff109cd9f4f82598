package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/kb"
)

// Bounds of what resources bring into the chat.
const (
	// maxListed resources (or prompts) of a server are printed; the rest
	// are counted.
	maxListed = host.MaxListed
	// maxAttachments @-references are attached per message.
	maxAttachments = 5
	// catalogTimeout bounds one listing or read started from the prompt.
	catalogTimeout = 30 * time.Second
)

// catalogs returns the servers that offer resources (or prompts, with
// prompts set), in the chat's order.
func (c *Chat) catalogs(prompts bool) []host.Catalog { return c.h.Tools().Catalogs(prompts) }

func (c *Chat) catalog(name string) (host.Catalog, bool) { return c.h.Tools().Catalog(name) }

// printResources is /resources [SERVER].
func (c *Chat) printResources(ctx context.Context, w io.Writer, only string) {
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	cats := c.catalogs(false)
	if only != "" {
		cat, ok := c.catalog(only)
		if !ok {
			fmt.Fprintf(w, "No MCP server is named %s (see /mcp).\n", textsafe.Escape(only))
			return
		}
		if !cat.OffersResources() {
			fmt.Fprintf(w, "MCP server %s offers no resources.\n", textsafe.Escape(only))
			return
		}
		cats = []host.Catalog{cat}
	}
	if len(cats) == 0 {
		fmt.Fprintln(w, "No connected MCP server offers resources.")
		return
	}
	for _, cat := range cats {
		rs, err := cat.Resources(ctx)
		name := textsafe.Escape(cat.Name())
		if err != nil {
			fmt.Fprintf(w, "MCP server %s: listing its resources failed: %s\n", name, escapeLines(err.Error()))
			continue
		}
		fmt.Fprintf(w, "MCP server %s: %d %s\n", name, len(rs), plural(len(rs), "resource", "resources"))
		for i, r := range rs {
			if i == maxListed {
				fmt.Fprintf(w, "  … and %d more\n", len(rs)-maxListed)
				break
			}
			line := "  @" + cat.Name() + ":" + r.URI
			if r.Name != "" && r.Name != r.URI {
				line += "  " + r.Name
			}
			if r.MIMEType != "" {
				line += " (" + r.MIMEType + ")"
			}
			fmt.Fprintln(w, textsafe.Preview(line, 300))
		}
	}
	fmt.Fprintln(w, "Read one with /read URI; write @SERVER:URI in a message to attach it for the model.")
}

// findResource picks the server of uri: the one whose listing has it, or
// the only one offering resources.
func (c *Chat) findResource(ctx context.Context, uri string) (host.Catalog, error) {
	cats := c.catalogs(false)
	if len(cats) == 0 {
		return nil, errors.New("no connected MCP server offers resources")
	}
	var names []string
	for _, cat := range cats {
		names = append(names, cat.Name())
		rs, err := cat.Resources(ctx)
		if err != nil {
			continue
		}
		for _, r := range rs {
			if r.URI == uri {
				return cat, nil
			}
		}
	}
	if len(cats) == 1 {
		return cats[0], nil // a template's URI, say: the server decides
	}
	return nil, fmt.Errorf("no MCP server lists %s; write @SERVER:URI to say which server to read it from (servers with resources: %s)", uri, strings.Join(names, ", "))
}

// readCommand is /read URI (or /read SERVER:URI with a server's name).
func (c *Chat) readCommand(ctx context.Context, w io.Writer, arg string) {
	if arg == "" {
		fmt.Fprintln(w, "Usage: /read URI (see /resources)")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, catalogTimeout)
	defer cancel()
	cat, uri := c.splitServerURI(arg)
	if cat == nil {
		var err error
		if cat, err = c.findResource(ctx, arg); err != nil {
			fmt.Fprintln(c.cfg.Err, "agentapp: error:", textsafe.Escape(err.Error()))
			return
		}
		uri = arg
	}
	text, _, err := host.ReadText(ctx, cat, uri)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", escapeLines(err.Error()))
		return
	}
	fmt.Fprintf(w, "%s from MCP server %s:\n%s\n", textsafe.Escape(uri), textsafe.Escape(cat.Name()), escapeLines(text))
}

// splitServerURI reads "SERVER:URI" where SERVER is a connected server's
// name; nil when s does not start with one.
func (c *Chat) splitServerURI(s string) (host.Catalog, string) {
	name, uri, ok := strings.Cut(s, ":")
	if !ok || uri == "" || strings.HasPrefix(uri, "//") {
		return nil, ""
	}
	cat, ok := c.catalog(name)
	if !ok {
		return nil, ""
	}
	return cat, uri
}

// attachments reads every @SERVER:URI of a message (SERVER a connected
// server's name) and returns them as one block for the model, each fenced
// as data, or an error naming the reference that failed: a message whose
// attachment is missing is not sent, so the model never answers without
// what the user pointed it to.
func (c *Chat) attachments(ctx context.Context, text string) (string, error) {
	var b strings.Builder
	n := 0
	for _, word := range strings.Fields(text) {
		if !strings.HasPrefix(word, "@") {
			continue
		}
		ref := strings.TrimRight(word[1:], ",.;!?)")
		cat, uri := c.splitServerURI(ref)
		if cat == nil {
			continue
		}
		if n++; n > maxAttachments {
			return "", fmt.Errorf("the message refers to more than %d resources; attach at most %d per message", maxAttachments, maxAttachments)
		}
		rctx, cancel := context.WithTimeout(ctx, catalogTimeout)
		body, mime, err := host.ReadText(rctx, cat, uri)
		cancel()
		if err != nil {
			return "", fmt.Errorf("attaching @%s: %w; the message was not sent", ref, err)
		}
		fmt.Fprintf(&b, "\n\nAttached resource @%s", ref)
		if mime != "" {
			fmt.Fprintf(&b, " (%s)", mime)
		}
		b.WriteString(". " + host.ResourceNotice + "\n" + kb.Fence(body))
	}
	return b.String(), nil
}

// catalogCommand runs /resources, /read and /prompts.
func (c *Chat) catalogCommand(ctx context.Context, cmd, line string) {
	_, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch cmd {
	case "/resources":
		c.printResources(ctx, c.cfg.Out, arg)
	case "/read":
		c.readCommand(ctx, c.cfg.Out, arg)
	case "/prompts":
		c.printPrompts(ctx, c.cfg.Out)
	}
}

// rootsCommand is /roots (list every server's roots) and /roots SERVER
// DIR… (offer these directories instead; the server is told the list
// changed).
func (c *Chat) rootsCommand(w io.Writer, args []string) {
	if len(args) == 0 {
		for _, s := range c.cfg.Servers {
			r, ok := s.(host.Rooted)
			if !ok {
				continue
			}
			roots := r.Roots()
			var uris []string
			for _, root := range roots {
				uris = append(uris, root.URI)
			}
			switch {
			case roots == nil:
				fmt.Fprintf(w, "MCP server %s: no roots offered\n", textsafe.Escape(s.Name()))
			case len(uris) == 0:
				fmt.Fprintf(w, "MCP server %s: an empty list of roots\n", textsafe.Escape(s.Name()))
			default:
				fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("MCP server %s: %s", s.Name(), strings.Join(uris, ", "))))
			}
		}
		fmt.Fprintln(w, "Change a server's roots with /roots SERVER DIR…")
		return
	}
	for _, s := range c.h.Tools().Servers() {
		r, ok := s.(host.Rooted)
		if !ok || s.Name() != args[0] {
			continue
		}
		if err := r.SetRoots(args[1:]); err != nil {
			fmt.Fprintln(c.cfg.Err, "agentapp: error:", textsafe.Escape(err.Error()))
			return
		}
		fmt.Fprintf(w, "MCP server %s now has %d %s; it was told the list changed.\n", textsafe.Escape(s.Name()), len(args)-1, plural(len(args)-1, "root", "roots"))
		return
	}
	fmt.Fprintf(w, "No MCP server is named %s (see /mcp).\n", textsafe.Escape(args[0]))
}
