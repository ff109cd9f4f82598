package resultstore

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/budget"
)

// DefaultMaxTokens is the cap on a tool result the model sees whole: about
// what a few pages of a report take, and what hosts people use settled on.
const DefaultMaxTokens = 25_000

// minMaxTokens is the smallest cap honoured: below it the note would be
// most of what the model sees.
const minMaxTokens = 256

// Limits are the caps on results, in tokens: a global one and one per
// server (the server's maxOutputTokens in the config).
type Limits struct {
	// Default applies to every server without its own cap; 0 means
	// DefaultMaxTokens.
	Default int
	// PerServer caps results of one server by its name; "" is the local
	// tools.
	PerServer map[string]int
}

// For returns the cap for a server's results.
func (l Limits) For(server string) int {
	n := l.PerServer[server]
	if n <= 0 {
		n = l.Default
	}
	if n <= 0 {
		n = DefaultMaxTokens
	}
	return max(n, minMaxTokens)
}

// Cutter cuts results over their cap and stores the whole.
type Cutter struct {
	// Store keeps whole results; nil means none is kept, and the note says
	// the rest cannot be read.
	Store Store
	// Estimator counts tokens; nil means o200k's.
	Estimator *budget.Estimator
	// Limits are the caps.
	Limits Limits
}

// Cut is what became of one result.
type Cut struct {
	// Text is what the model sees: the result itself, or its head and the
	// note.
	Text string
	// Cut reports that the result was over its cap.
	Cut bool
	// ID is the stored whole's handle; "" when nothing was stored.
	ID string
	// Bytes and Tokens are the size of the whole result (Tokens
	// estimated).
	Bytes, Tokens int
	// Shown is the number of bytes of the head.
	Shown int
	// StoreErr says why the whole was not stored, when it was not.
	StoreErr error
}

// Notice returns a one-line message for the user (a chat line, a web step,
// a stream-json field) about a cut result; "" when it was not cut.
func (c Cut) Notice(tool string) string {
	if !c.Cut {
		return ""
	}
	s := fmt.Sprintf("%s returned %d bytes (about %d tokens); the model sees the first %d", tool, c.Bytes, c.Tokens, c.Shown)
	if c.ID != "" {
		return s + fmt.Sprintf(" and can read the rest as %s", c.ID)
	}
	return s + fmt.Sprintf(" and cannot read the rest (%v)", c.StoreErr)
}

// Apply returns text as the model should see it. A result within the cap
// of its server is returned as it is; a larger one is cut to a head of at
// most the cap (ending at a line break when there is one near the end,
// never inside a UTF-8 sequence) followed by a note, and the whole is put
// in the store under session.
func (c *Cutter) Apply(ctx context.Context, session, server, tool, text string) Cut {
	e := c.Estimator
	if e == nil {
		e = budget.NewEstimator(budget.FamilyO200k)
	}
	limit := c.Limits.For(server)
	out := Cut{Text: text, Bytes: len(text), Shown: len(text)}
	// Most results are small: a byte count settles them without a scan,
	// as the estimate never gives a byte more than two tokens (a lone digit
	// is the most, 1.9).
	if len(text)*2 <= limit {
		return out
	}
	out.Tokens = e.Text(text)
	if out.Tokens <= limit {
		return out
	}
	out.Cut = true
	const noteReserve = 160 // tokens the note itself takes, with margin
	out.Shown = headBytes(e, text, limit-noteReserve)
	if c.Store != nil {
		out.ID, out.StoreErr = c.Store.Put(ctx, Result{Session: session, Server: server, Tool: tool, Text: text})
	} else {
		out.StoreErr = fmt.Errorf("no result store")
	}
	var b strings.Builder
	b.Grow(out.Shown + 400)
	b.WriteString(strings.ToValidUTF8(text[:out.Shown], "\uFFFD"))
	if !strings.HasSuffix(text[:out.Shown], "\n") {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "\n[Result cut: the whole is %d bytes (about %d tokens); the first %d bytes are above.", out.Bytes, out.Tokens, out.Shown)
	if out.ID != "" {
		fmt.Fprintf(&b, ` The whole is stored as %q: to read on, call readToolResult {"id":%q,"offset":%d}.]`, out.ID, out.ID, out.Shown)
	} else {
		b.WriteString(" The rest was not kept and cannot be read; if you need it, ask the tool for less (a narrower query, a page, a filter).]")
	}
	out.Text = b.String()
	return out
}

// headBytes returns the length of the longest head of text whose estimate
// is within maxTokens, moved back to a line break in its last fifth when
// there is one, and never inside a UTF-8 sequence.
func headBytes(e *budget.Estimator, text string, maxTokens int) int {
	maxTokens = max(maxTokens, 1)
	// A token covers at most a few dozen bytes, so the head is within
	// 32 bytes a token: the search never scans the whole of a huge text.
	lo, hi := 0, min(len(text), maxTokens*32)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if e.Text(text[:mid]) <= maxTokens {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	n := runeStart(text, lo)
	if i := strings.LastIndexByte(text[:n], '\n'); i >= 0 && i+1 >= n-n/5 {
		n = i + 1
	}
	return n
}

// runeStart moves n back to the start of the UTF-8 sequence it is in (at
// most three bytes: invalid bytes count as sequences of one).
func runeStart(text string, n int) int {
	if n >= len(text) {
		return len(text)
	}
	for i := 0; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(text[n]); i++ {
		n--
	}
	return n
}
