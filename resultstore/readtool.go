package resultstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
)

// ReadToolName is the name the model calls the paging tool by.
const ReadToolName = "readToolResult"

// ReadOptions tune the readToolResult tool. A nil *ReadOptions, or a zero
// field, means the default.
type ReadOptions struct {
	// PageTokens bounds one page when the model gives no limit (default
	// 10,000): a page must itself fit comfortably in the context.
	PageTokens int
	// Estimator counts tokens; nil means o200k's.
	Estimator *budget.Estimator
	// PageTokensFor, when set, bounds a page of a result of server
	// further: a page of a server's result stays within that server's
	// cap (Limits.For).
	PageTokensFor func(server string) int
}

// readArgs are readToolResult's arguments.
type readArgs struct {
	ID     string   `json:"id"`
	Offset *float64 `json:"offset"`
	Limit  *float64 `json:"limit"`
}

// readSchema is readToolResult's input schema.
const readSchema = `{"type":"object","properties":{` +
	`"id":{"type":"string","minLength":1,"maxLength":64,"description":"The id from the note of a cut result, e.g. tr_0123456789ab."},` +
	`"offset":{"type":"integer","minimum":0,"description":"Byte offset to read from; the note and each page say where to continue."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":1000000,"description":"Optional: at most this many bytes; by default a page of about %d tokens."}},` +
	`"required":["id","offset"],"additionalProperties":false}`

// NewReadTool returns the readToolResult tool, which pages through the
// results s keeps for the calling session (agent.SessionFrom). Its errors
// are written for the model: an unknown id says where ids come from, an
// offset past the end says the size.
func NewReadTool(s Store, opts *ReadOptions) *agent.Tool {
	var o ReadOptions
	if opts != nil {
		o = *opts
	}
	if o.PageTokens <= 0 {
		o.PageTokens = 10_000
	}
	if o.Estimator == nil {
		o.Estimator = budget.NewEstimator(budget.FamilyO200k)
	}
	return &agent.Tool{
		Name:  ReadToolName,
		Title: "Read a stored tool result",
		Description: "Read more of a tool result that was too large to show whole. " +
			"When a result is cut, its note gives an id and the offset to continue from; " +
			"each page ends with the offset of the next one.",
		InputSchema: json.RawMessage(fmt.Sprintf(readSchema, o.PageTokens)),
		ReadOnly:    true,
		Idempotent:  true,
		Validate:    true,
		Execute: func(ctx context.Context, raw json.RawMessage) (any, error) {
			var a readArgs
			if err := json.Unmarshal(raw, &a); err != nil {
				return nil, fmt.Errorf("arguments must be {\"id\": string, \"offset\": integer, \"limit\": integer (optional)}: %v", err)
			}
			if a.Offset == nil || *a.Offset < 0 || *a.Offset != float64(int64(*a.Offset)) {
				return nil, errors.New("offset must be a whole number of bytes, 0 or more (the note of the cut result gives the one to use)")
			}
			r, err := s.Get(ctx, agent.SessionFrom(ctx), a.ID)
			if errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("no stored result %q in this conversation: use the id exactly as the note of a cut result gives it; results are kept for a limited time and size, so an old one may be gone (call the tool again)", a.ID)
			}
			if err != nil {
				return nil, fmt.Errorf("reading stored result %q: %v", a.ID, err)
			}
			return page(o, r, int64(*a.Offset), a.Limit), nil
		},
	}
}

// page returns the page of r from offset: at most limit bytes, or about
// PageTokens, ending at a line break near its end when there is one, with a
// line saying where it is and where the next page starts.
func page(o ReadOptions, r Result, offset int64, limit *float64) string {
	size := int64(len(r.Text))
	if offset >= size {
		if offset == size {
			return fmt.Sprintf("[End of result %s: it is %d bytes and offset %d is its end; there is nothing more to read.]", r.ID, size, offset)
		}
		return fmt.Sprintf("[Offset %d is past the end of result %s, which is %d bytes: read from an offset below %d.]", offset, r.ID, size, size)
	}
	start := runeStart(r.Text, int(offset))
	rest := r.Text[start:]
	var n int
	if limit != nil && *limit >= 1 {
		n = runeStart(rest, int(min(*limit, float64(len(rest)))))
		if n == 0 {
			n = min(len(rest), utf8Len(rest))
		}
	} else {
		pt := o.PageTokens
		if o.PageTokensFor != nil {
			pt = max(1, min(pt, o.PageTokensFor(r.Server)))
		}
		n = headBytes(o.Estimator, rest, pt)
	}
	if n == 0 { // a page always moves forward
		n = min(len(rest), utf8Len(rest))
	}
	end := int64(start + n)
	var b strings.Builder
	b.Grow(n + 200)
	b.WriteString(strings.ToValidUTF8(rest[:n], "\uFFFD"))
	if !strings.HasSuffix(rest[:n], "\n") {
		b.WriteByte('\n')
	}
	if end >= size {
		fmt.Fprintf(&b, "[Result %s, bytes %d–%d of %d: the end.]", r.ID, start, end, size)
	} else {
		fmt.Fprintf(&b, `[Result %s, bytes %d–%d of %d. Next: readToolResult {"id":%q,"offset":%d}]`, r.ID, start, end, size, r.ID, end)
	}
	return b.String()
}

// utf8Len returns the length of the first UTF-8 sequence of s (1 for an
// invalid byte).
func utf8Len(s string) int {
	for i := 1; i < len(s) && i < 4; i++ {
		if runeStartByte(s[i]) {
			return i
		}
	}
	return min(len(s), 4)
}

func runeStartByte(b byte) bool { return b&0xC0 != 0x80 }
