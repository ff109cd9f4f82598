package toolsearch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
)

// SearchToolName is the name the model calls the search tool by.
const SearchToolName = "searchTools"

// ToolOptions tune the searchTools tool. A nil *ToolOptions, or a zero
// field, means the default.
type ToolOptions struct {
	// MaxResults is how many tools one search returns and loads
	// (default 5).
	MaxResults int
	// Index returns the index to search; the host swaps it when servers
	// connect or leave. It is called once per search.
	Index func() *Index
	// OnLoad is told the tools a search found, so the host offers them in
	// later requests of the session (agent.SessionFrom(ctx)) and keeps
	// them with it. It may be nil (a search that only lists).
	OnLoad func(ctx context.Context, found []Entry)
}

// maxSummaryRunes bounds the one-line description of a result.
const maxSummaryRunes = 160

// NewSearchTool returns the searchTools tool. Its result lists the tools
// found, best first (name, server, one line of description), and says that
// they are loaded; a query that is a tool's exact name loads that tool
// only and lists the other hits as not loaded. Errors are written for the
// model.
func NewSearchTool(opts *ToolOptions) *agent.Tool {
	var o ToolOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxResults <= 0 {
		o.MaxResults = 5
	}
	return &agent.Tool{
		Name:  SearchToolName,
		Title: "Search tools",
		Description: "Find tools that are available but not yet loaded. Describe what you want to do " +
			"(in English or Chinese) or give a tool's exact name; the tools found are loaded and can be called " +
			"from your next step on. Search before telling the user that no tool can do something.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","minLength":1,"maxLength":1000,` +
			`"description":"What the tool should do, e.g. \"read a file\" or \"发送 Slack 消息\", or a tool name such as read_file or github__create_issue."}},` +
			`"required":["query"],"additionalProperties":false}`),
		ReadOnly:   true,
		Idempotent: true,
		Validate:   true,
		Execute: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, fmt.Errorf(`arguments must be {"query": string}: %v`, err)
			}
			if strings.TrimSpace(a.Query) == "" {
				return nil, errors.New(`query is empty: say what the tool should do, e.g. "read a file", or give its name`)
			}
			var ix *Index
			if o.Index != nil {
				ix = o.Index()
			}
			if ix == nil || ix.Len() == 0 {
				return "There are no deferred tools to search: every available tool is already offered to you.", nil
			}
			hits := ix.Search(a.Query, o.MaxResults)
			if len(hits) == 0 {
				return fmt.Sprintf("No tool matches %q. Try other words (what the tool does, in English if the first try was Chinese), or a tool name.", clipRunes(a.Query, 100)), nil
			}
			// A query that names a tool asks for that tool: only it is
			// loaded, so one lookup by name does not add four unwanted
			// definitions to every later request. The other hits are still
			// listed, for a model that meant something else.
			var found, others []Hit
			for _, h := range hits {
				if h.Exact {
					found = append(found, h)
				} else {
					others = append(others, h)
				}
			}
			if len(found) == 0 {
				found, others = hits, nil
			}
			if o.OnLoad != nil {
				entries := make([]Entry, len(found))
				for i, h := range found {
					entries[i] = h.Entry
				}
				o.OnLoad(ctx, entries)
			}
			var b strings.Builder
			if len(found) == 1 {
				fmt.Fprintf(&b, "Found 1 tool, now loaded (call it by name):\n")
			} else {
				fmt.Fprintf(&b, "Found %d tools, now loaded (call them by name):\n", len(found))
			}
			writeHits(&b, found)
			if len(others) > 0 {
				fmt.Fprintf(&b, "Other matches, not loaded (search for one by its name to load it):\n")
				writeHits(&b, others)
			}
			return b.String(), nil
		},
	}
}

// writeHits lists hits one a line: name, server, one line of description.
func writeHits(b *strings.Builder, hits []Hit) {
	for _, h := range hits {
		server := h.Server
		if server == "" {
			server = "local"
		}
		fmt.Fprintf(b, "- %s (%s): %s\n", h.Name, server, oneLine(h.Description))
	}
}

// oneLine returns the first sentence or line of s, at most
// maxSummaryRunes, with control characters removed.
func oneLine(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
	return clipRunes(strings.TrimSpace(s), maxSummaryRunes)
}

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
