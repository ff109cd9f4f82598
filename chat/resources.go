package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/editdist"
	"github.com/agentapp/agentapp/internal/textsafe"
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
func (c *Chat) attachments(ctx context.Context, text string) ([]host.Attachment, error) {
	var atts []host.Attachment
	n := 0
	for _, word := range strings.Fields(text) {
		if !strings.HasPrefix(word, "@") {
			continue
		}
		ref := strings.TrimRight(word[1:], ",.;!?)")
		cat, uri := c.splitServerURI(ref)
		if cat == nil {
			if err := c.unknownReference(ref); err != nil {
				return nil, err
			}
			continue
		}
		if n++; n > maxAttachments {
			return nil, fmt.Errorf("the message refers to more than %d resources; attach at most %d per message", maxAttachments, maxAttachments)
		}
		rctx, cancel := context.WithTimeout(ctx, catalogTimeout)
		body, mime, err := host.ReadText(rctx, cat, uri)
		if err != nil {
			near := nearResources(rctx, cat, uri)
			cancel()
			return nil, fmt.Errorf("attaching @%s: %w%s; the message was not sent", ref, err, near)
		}
		cancel()
		label := "Attached resource @" + ref
		if mime != "" {
			label += " (" + mime + ")"
		}
		atts = append(atts, host.Attachment{Label: label, Text: body})
		// One line says what went with the message, so the user knows
		// the model has it (and how much of it).
		note := fmt.Sprintf("Attached %s from MCP server %s (%s", uri, cat.Name(), sizeOf(body))
		if mime != "" {
			note += ", " + mime
		}
		fmt.Fprintln(c.cfg.Err, textsafe.Escape(note+")"))
	}
	return atts, nil
}

// refName is what may name a server in @SERVER:URI: a word that starts
// with a letter, as the config's server names do; "@10:30" is text.
func refName(s string) bool {
	if s == "" || len(s) > 64 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
}

// unknownReference refuses an @NAME:URI whose NAME is no connected server
// offering resources, naming what is there (and the closest names), so a
// mistyped reference is not sent to the model as plain text. Anything that
// does not look like a reference (an e-mail handle, "@10:30") is nil.
func (c *Chat) unknownReference(ref string) error {
	name, uri, ok := strings.Cut(ref, ":")
	if !ok || uri == "" || strings.HasPrefix(uri, "//") || !refName(name) {
		return nil
	}
	var names []string
	for _, cat := range c.catalogs(false) {
		names = append(names, cat.Name())
	}
	why := "no connected MCP server is named " + name
	for _, in := range c.h.Tools().Inactive() {
		if in.Name == name {
			why = "MCP server " + name + " is not connected (see /mcp)"
		}
	}
	for _, s := range c.h.Tools().Servers() {
		if s.Name() == name {
			why = "MCP server " + name + " offers no resources"
		}
	}
	msg := fmt.Sprintf("@%s: %s", ref, why)
	switch near := closest(name, names, 3); {
	case len(near) > 0:
		for i, n := range near {
			near[i] = "@" + n + ":" + uri
		}
		msg += "; did you mean " + strings.Join(near, " or ") + "?"
	case len(names) > 0:
		msg += "; servers with resources: " + strings.Join(names, ", ")
	default:
		msg += "; no connected server offers resources"
	}
	return errors.New(textsafe.Escape(msg + " (the message was not sent; /resources lists what can be attached)"))
}

// nearResources names the listed resources of cat closest to uri, as
// "; near: @S:U, …", or "" when the listing fails or nothing is close.
func nearResources(ctx context.Context, cat host.Catalog, uri string) string {
	rs, err := cat.Resources(ctx)
	if err != nil {
		return ""
	}
	var uris []string
	for i, r := range rs {
		if i == maxListed {
			break
		}
		uris = append(uris, r.URI)
	}
	near := closest(uri, uris, 3)
	if len(near) == 0 {
		return fmt.Sprintf("; MCP server %s lists no such resource (/resources %s lists its %d)", cat.Name(), cat.Name(), len(rs))
	}
	for i, u := range near {
		near[i] = "@" + cat.Name() + ":" + u
	}
	return fmt.Sprintf("; MCP server %s lists no such resource (did you mean %s?)", cat.Name(), strings.Join(near, " or "))
}

// closest returns at most n of names within a few edits of want (2, or 3
// for a name of 9 characters or more), nearest first: a typo, not any
// name of the same shape.
func closest(want string, names []string, n int) []string {
	limit := 2
	if utf8.RuneCountInString(want) >= 9 {
		limit = 3
	}
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		if d := editdist.Distance(want, name); d <= limit {
			cs = append(cs, cand{name, d})
		}
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for i, c := range cs {
		if i == n {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// sizeOf is the size of an attached text for a person: bytes, kB or MB.
func sizeOf(s string) string {
	switch n := len(s); {
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	default:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
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
		for _, s := range c.h.Tools().Servers() {
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
