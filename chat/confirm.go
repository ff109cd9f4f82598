package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/guard"
)

// TerminalConfirmer is the guard.Confirmer of a person at a terminal. It
// writes
//
//	Allow tool X (server S) with {"a":1}? [y/N/a]
//
// and reads the answer through the chat's one line reader, so the
// question and the REPL never read stdin at the same time. The guards
// decide what y and n mean (guard.Answer: only y or yes approves); a (or
// always) approves this call and every later call of the same tool of the
// same server for the rest of the session, without asking. End of input,
// no answer within Timeout, a cancelled call and a non-interactive stdin
// all refuse, and so does the zero value. Questions are asked one at a
// time even when the model runs calls concurrently. The answers are never
// kept in the line history.
type TerminalConfirmer struct {
	// Timeout bounds the wait for an answer; 0 means
	// guard.DefaultConfirmTimeout.
	Timeout time.Duration

	in          *lineReader
	out         io.Writer // the notes: a refusal, a timeout
	interactive bool
	turn        chan struct{} // one question at a time

	// hint says how to run a call without being asked, for the refusal
	// when nobody can answer; nil adds nothing.
	hint func(guard.ConfirmRequest) string

	mu     sync.Mutex
	always map[string]bool // tool and server approved for the session
}

// NewTerminalConfirmer returns a confirmer that reads answers from in, one
// plain line each, and writes its questions and notes to out. interactive
// says whether in is a terminal (term.IsTerminal); when it is false every
// call is refused with a note on out, since nobody can answer.
//
// The confirmer becomes the only reader of in. A chat makes its own
// confirmer, which shares the REPL's reader, when its guards have none;
// this one is for a program that reads nothing else from in.
func NewTerminalConfirmer(in io.Reader, out io.Writer, interactive bool) *TerminalConfirmer {
	lines := newLineReader(out)
	lines.use(&plainSource{r: bufio.NewReader(in)})
	return newTerminalConfirmer(lines, out, interactive)
}

// newTerminalConfirmer returns a confirmer reading answers through in and
// writing its notes to out.
func newTerminalConfirmer(in *lineReader, out io.Writer, interactive bool) *TerminalConfirmer {
	return &TerminalConfirmer{in: in, out: out, interactive: interactive, turn: make(chan struct{}, 1)}
}

// Confirm implements guard.Confirmer: it asks whether req may run.
func (c *TerminalConfirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	what := req.Describe()
	if !c.interactive || c.in == nil {
		// The zero TerminalConfirmer has nobody to ask and nowhere to
		// say so; it refuses all the same.
		hint := ""
		if c.hint != nil {
			if h := c.hint(req); h != "" {
				hint = "; " + h
			}
		}
		if c.out != nil {
			fmt.Fprintf(c.out, "agentapp: warning: %s needs confirmation but stdin is not a terminal: refused%s\n", what, hint)
		}
		return guard.Decision{Reason: "stdin is not a terminal, so nobody could confirm" + hint}
	}
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		return guard.Decision{Reason: "the call was cancelled before it could be confirmed"}
	}
	key := req.Server + "\x00" + req.Tool
	c.mu.Lock()
	always := c.always[key]
	c.mu.Unlock()
	if always {
		return guard.Decision{Approved: true, Reason: "approved by the user for the rest of the session"}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = guard.DefaultConfirmTimeout
	}
	question := fmt.Sprintf("Allow %s with %s? [y/N/a] ", what, req.ArgsPreview())
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The reader shows the question: a line editor as its prompt (it
	// would paint over text written before it), plain input by writing it
	// first.
	line, err := c.in.read(waitCtx, question, nil)
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		fmt.Fprintf(c.out, "\nno answer within %v: refused\n", timeout)
		return guard.Decision{Reason: fmt.Sprintf("no answer within %v", timeout)}
	case ctx.Err() != nil:
		fmt.Fprintln(c.out, "\ncancelled: refused")
		return guard.Decision{Reason: "the call was cancelled while waiting for confirmation"}
	case errors.Is(err, io.EOF):
		fmt.Fprintln(c.out, "\nend of input: refused")
		return guard.Decision{Reason: "end of input before an answer"}
	default:
		fmt.Fprintf(c.out, "\ncannot read the answer (%v): refused\n", err)
		return guard.Decision{Reason: "cannot read the answer: " + err.Error()}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "a", "always":
		c.mu.Lock()
		if c.always == nil {
			c.always = map[string]bool{}
		}
		c.always[key] = true
		c.mu.Unlock()
		return guard.Decision{Approved: true, Reason: "approved by the user for the rest of the session"}
	}
	return guard.Answer(line)
}
