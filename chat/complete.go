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
	"github.com/agentapp/agentapp/internal/textsafe"
)

// Tab completion in the line editor. Tab completes the word before the
// cursor as bash does: one candidate is inserted whole, several are
// completed to what they share, and a second Tab that cannot add anything
// lists them above the line. Listing rather than cycling suits this
// editor: it already writes notes above the line it edits, and a list of
// resource URIs is easier to choose from when seen than when cycled
// through one at a time.

// Bounds of a completion.
const (
	// completeTimeout bounds the listing of a server's resources or
	// prompts for one Tab; a server that does not answer in time is named
	// instead.
	completeTimeout = 2 * time.Second
	// maxCandidates are listed; the rest are counted.
	maxCandidates = 60
)

// completer returns the word before the cursor that Tab completes, the
// candidates (each starting with word), and a note to show (a server that
// did not answer), any of which may be empty.
type completer func(before string) (word string, cands []string, note string)

// replCommands are the slash commands /help lists, for completion.
var replCommands = []string{"/tools", "/mcp", "/call", "/resources", "/read", "/prompts", "/skills", "/roots", "/hooks", "/new", "/help", "/exit", "/quit"}

// complete is the chat's completer: slash commands and /SERVER:PROMPT at
// the start of the line, @SERVER:URI anywhere.
func (c *Chat) complete(before string) (string, []string, string) {
	word := before[strings.LastIndexAny(before, " \t\n")+1:]
	first := strings.TrimLeft(before, " ") == word
	ctx, cancel := context.WithTimeout(context.Background(), completeTimeout)
	defer cancel()
	switch {
	case strings.HasPrefix(word, "@"):
		cands, note := c.completeResource(ctx, word)
		return word, cands, note
	case first && strings.HasPrefix(word, "/"):
		cands, note := c.completeCommand(ctx, word)
		return word, cands, note
	}
	return word, nil, ""
}

// completeCommand completes /COMMAND and /SERVER:PROMPT.
func (c *Chat) completeCommand(ctx context.Context, word string) ([]string, string) {
	if server, prefix, ok := strings.Cut(word[1:], ":"); ok {
		cat, found := c.catalog(server)
		if !found || !cat.OffersPrompts() {
			return nil, ""
		}
		ps, err := cat.Prompts(ctx)
		if err != nil {
			return nil, noAnswer(server, "prompts", err)
		}
		var out []string
		for _, p := range ps {
			if strings.HasPrefix(p.Name, prefix) {
				out = append(out, "/"+server+":"+p.Name)
			}
		}
		return out, ""
	}
	var out []string
	for _, cmd := range replCommands {
		if strings.HasPrefix(cmd, word) {
			out = append(out, cmd)
		}
	}
	for _, cat := range c.catalogs(true) {
		if cand := "/" + cat.Name() + ":"; strings.HasPrefix(cand, word) {
			out = append(out, cand)
		}
	}
	return out, ""
}

// completeResource completes @SERVER: (servers that offer resources) and
// @SERVER:URI (that server's listed resources).
func (c *Chat) completeResource(ctx context.Context, word string) ([]string, string) {
	server, prefix, ok := strings.Cut(word[1:], ":")
	if !ok {
		var out []string
		for _, cat := range c.catalogs(false) {
			if strings.HasPrefix(cat.Name(), server) {
				out = append(out, "@"+cat.Name()+":")
			}
		}
		return out, ""
	}
	cat, found := c.catalog(server)
	if !found || !cat.OffersResources() {
		return nil, ""
	}
	rs, err := cat.Resources(ctx)
	if err != nil {
		return nil, noAnswer(server, "resources", err)
	}
	var out []string
	for i, r := range rs {
		if i == host.MaxListed {
			break
		}
		if strings.HasPrefix(r.URI, prefix) {
			out = append(out, "@"+server+":"+r.URI)
		}
	}
	return out, ""
}

// noAnswer says that a server's listing failed or took too long.
func noAnswer(server, what string, err error) string {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		return textsafe.Escape(fmt.Sprintf("MCP server %s did not list its %s within %s", server, what, completeTimeout))
	}
	return textsafe.Escape(fmt.Sprintf("MCP server %s could not list its %s: %s", server, what, firstLine(err.Error())))
}

// commonPrefix is the longest prefix all of cands share, cut at a whole
// rune.
func commonPrefix(cands []string) string {
	if len(cands) == 0 {
		return ""
	}
	p := cands[0]
	for _, c := range cands[1:] {
		n := 0
		for n < len(p) && n < len(c) && p[n] == c[n] {
			n++
		}
		p = p[:n]
	}
	for len(p) > 0 && !utf8.ValidString(p) {
		p = p[:len(p)-1] // a rune cut in the middle
	}
	return p
}

// completeLocked is Tab: it completes the word before the cursor, or
// lists the candidates when it cannot add to it.
func (e *termEditor) completeLocked() {
	if e.complete == nil {
		return
	}
	word, cands, note := e.complete(strings.Join(e.line[:e.pos], ""))
	if note != "" {
		e.writeAboveLocked([]byte(note + "\n"))
	}
	if len(cands) == 0 {
		io.WriteString(e.out, "\a")
		return
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	common := commonPrefix(cands)
	if len(common) > len(word) && strings.HasPrefix(common, word) {
		add := common[len(word):]
		if len(cands) == 1 && !strings.HasSuffix(common, ":") {
			add += " "
		}
		e.insertLocked(add)
		return
	}
	if len(cands) == 1 {
		return // complete already
	}
	shown := cands
	more := ""
	if len(shown) > maxCandidates {
		shown = shown[:maxCandidates]
		more = fmt.Sprintf("\n… and %d more; type more of the name", len(cands)-maxCandidates)
	}
	e.writeAboveLocked([]byte(fitWidth(textsafe.Escape(strings.Join(shown, "  ")), e.cols()) + more + "\n"))
}
