package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/internal/units"
)

// Defaults of listLimits.
const (
	// defaultMaxListPages bounds the pages of one listing: a real server
	// with more than this many pages has more than a model can use, and a
	// server that keeps sending cursors is paginating in a loop.
	defaultMaxListPages = 100
	// defaultMaxListItems bounds the items (tools, resources, templates,
	// prompts) of one listing across all its pages.
	defaultMaxListItems = 10_000
	// defaultMaxListBytes bounds the size of one listing across all its
	// pages; each page is bounded by supervise.MaxFrameSize on its own.
	defaultMaxListBytes = 16 << 20
)

// listLimits bound what one paginated listing (tools/list, resources/list,
// resources/templates/list, prompts/list) may bring into memory, so that a
// server sending endless, looping or huge pages fails the listing in
// seconds instead of growing the client until a timeout. A field left at
// 0 takes its default.
type listLimits struct {
	// MaxPages is the most pages one listing may take (default 100).
	MaxPages int
	// MaxItems is the most items across the pages (default 10,000).
	MaxItems int
	// MaxBytes is the most bytes across the pages (default 16 MiB). A page is measured by encoding its items
	// again as JSON once the SDK has decoded them: the size of what the
	// client keeps, which the wire size exceeds only by whitespace and
	// fields the client does not know.
	MaxBytes int64
}

func (l listLimits) withDefaults() listLimits {
	if l.MaxPages <= 0 {
		l.MaxPages = defaultMaxListPages
	}
	if l.MaxItems <= 0 {
		l.MaxItems = defaultMaxListItems
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = defaultMaxListBytes
	}
	return l
}

// withListLimits sets the bounds of every paginated listing (see
// listLimits; the zero value is the defaults).
func withListLimits(l listLimits) ConnectOption {
	return func(o *connectOptions) { o.lists = l }
}

// listLimitError is a listing stopped because the server went past one of
// the listLimits, or sent a cursor it had sent before. Its message says
// which limit was hit and what to do.
type listLimitError struct {
	Server string
	// Method is the list method, such as "tools/list".
	Method string
	// Limit is what was hit: "pages", "items", "bytes" or "cursor" (a
	// repeated cursor).
	Limit string
	msg   string
}

func (e *listLimitError) Error() string { return e.msg }

// listNouns names the items of each list method in messages.
var listNouns = map[string]string{
	"tools/list":               "tools",
	"resources/list":           "resources",
	"resources/templates/list": "resource templates",
	"prompts/list":             "prompts",
}

// listAll reads every page of one list method, asking page for the page at
// a cursor ("" for the first), and enforces lim on the way: a cursor seen
// before, a page past MaxPages, and more than MaxItems items or MaxBytes
// bytes across the pages each stop the listing with a *listLimitError.
// It is the one paginator of the bridge: the SDK's iterators follow
// cursors for as long as the server sends them.
func listAll[T any](ctx context.Context, server, method string, lim listLimits, page func(ctx context.Context, cursor string) ([]*T, string, error)) ([]*T, error) {
	lim = lim.withDefaults()
	noun := listNouns[method]
	if noun == "" {
		noun = "items"
	}
	fail := func(limit, format string, a ...any) error {
		return &listLimitError{Server: server, Method: method, Limit: limit, msg: fmt.Sprintf(format, a...)}
	}
	var (
		all    []*T
		bytes  int64
		cursor string
		seen   = map[string]int{} // cursor → the page that sent it
	)
	for n := 1; ; n++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			if n > 1 {
				return nil, fmt.Errorf("%s, page %d: %w", method, n, err)
			}
			return nil, err
		}
		if len(all)+len(items) > lim.MaxItems {
			return nil, fail("items", "server %q listed more than %s %s in %s (page %d); the limit is %s: the server offers more than a client can use, or is paginating in a loop; configure it to offer fewer",
				server, units.Commas(int64(lim.MaxItems)), noun, method, n, units.Commas(int64(lim.MaxItems)))
		}
		size, err := json.Marshal(items)
		if err != nil {
			return nil, fmt.Errorf("%s, page %d: %w", method, n, err)
		}
		bytes += int64(len(size)) + int64(len(next))
		if bytes > lim.MaxBytes {
			return nil, fail("bytes", "server %q sent more than %s in %d %s of %s; the limit is %s across all pages: the server sends too much (huge descriptions or schemas?) or is paginating in a loop",
				server, units.SizeText(lim.MaxBytes), n, units.Plural(n, "page", "pages"), method, units.SizeText(lim.MaxBytes))
		}
		all = append(all, items...)
		if next == "" {
			return all, nil
		}
		if first, dup := seen[next]; dup {
			return nil, fail("cursor", "server %q sent the cursor %s again on page %d of %s (first on page %d): the server is paginating in a loop; report it to its maintainers",
				server, textsafe.Preview(strconv.Quote(next), 80), n, method, first)
		}
		if n >= lim.MaxPages {
			return nil, fail("pages", "server %q sent page %d of %s with a cursor to page %d; the limit is %d pages: the server is probably paginating in a loop",
				server, n, method, n+1, lim.MaxPages)
		}
		seen[next] = n
		cursor = next
	}
}
