package chat

import (
	"context"
	"fmt"
	"io"

	"github.com/agentapp/agentapp/host"
)

// usageCommand is /usage: the tokens of the last answer and of the whole
// session, and the window every request is planned against.
func (c *Chat) usageCommand(ctx context.Context, out io.Writer) {
	if u := c.lastUsage; u != nil {
		fmt.Fprintf(out, "Last answer: %s.\n", tokens(u.InputTokens, u.OutputTokens, len(u.Calls), estimatedCalls(u)))
		for i, call := range u.Calls {
			mark := ""
			if call.Estimated {
				mark = " (estimated)"
			}
			fmt.Fprintf(out, "  call %d (%s): %d input, %d output%s\n", i+1, call.Purpose, call.InputTokens, call.OutputTokens, mark)
		}
	} else {
		fmt.Fprintln(out, "No answer yet in this chat.")
	}
	su, err := c.h.SessionUsage(ctx, c.session)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", err)
		return
	}
	fmt.Fprintf(out, "Session %s: %s.\n", c.session, tokens(int(su.InputTokens), int(su.OutputTokens), int(su.Calls), int(su.EstimatedCalls)))
	if su.Folds > 0 {
		fmt.Fprintf(out, "Older turns were folded %d %s; the summary is about %d tokens (the transcript keeps every message).\n", su.Folds, plural(int(su.Folds), "time", "times"), su.SummaryTokens)
	}
	fmt.Fprintf(out, "Context window: %d tokens (%s).\n", c.h.ContextWindow(), c.h.Model().Name())
}

func tokens(in, out, calls, estimated int) string {
	s := fmt.Sprintf("%d input + %d output tokens in %d model %s", in, out, calls, plural(calls, "call", "calls"))
	switch {
	case estimated == 0:
	case estimated == calls:
		s += " (estimated: the model reports no usage)"
	default:
		s += fmt.Sprintf(" (%d estimated)", estimated)
	}
	return s
}

func estimatedCalls(u *host.Usage) int {
	n := 0
	for _, c := range u.Calls {
		if c.Estimated {
			n++
		}
	}
	return n
}

// folded tells, on the activity's stream, that the model's view of the
// conversation was folded: nothing leaves it silently.
func (a *activity) folded(f *host.Fold) {
	if a == nil || f == nil {
		return
	}
	fmt.Fprintln(a.w, a.st.dim(fmt.Sprintf("(%d older %s folded into a summary of about %d tokens to fit the context window of %d; /usage shows more)",
		f.Messages, plural(f.Messages, "message", "messages"), f.SummaryTokens, f.Window)))
}

// compactCommand is /compact: fold the session's older turns into its
// summary now.
func (c *Chat) compactCommand(ctx context.Context, out io.Writer) {
	res, err := c.h.Compact(ctx, c.session)
	if err != nil {
		fmt.Fprintln(c.cfg.Err, "agentapp: error:", err)
		return
	}
	if res.Folded == 0 {
		fmt.Fprintln(out, "Nothing to fold: the model already sees only the latest turn (and the summary, if any).")
		return
	}
	fmt.Fprintf(out, "Folded %d %s into a summary of about %d tokens; the model keeps the latest turn (%d %s) verbatim. The transcript keeps every message.\n",
		res.Folded, plural(res.Folded, "message", "messages"), res.SummaryTokens, res.Kept, plural(res.Kept, "message", "messages"))
}
