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
// they are loaded; errors are written for the model.
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
			found := make([]Entry, len(hits))
			for i, h := range hits {
				found[i] = h.Entry
			}
			if o.OnLoad != nil {
				o.OnLoad(ctx, found)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "Found %d tools, now loaded (call them by name):\n", len(hits))
			for _, h := range hits {
				server := h.Server
				if server == "" {
					server = "local"
				}
				fmt.Fprintf(&b, "- %s (%s): %s\n", h.Name, server, oneLine(h.Description))
			}
			return b.String(), nil
		},
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
