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

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// TerminalConfirmer is the guard.Confirmer of a person at a terminal. It
// writes
//
//	Allow tool X (server S) with {"a":1}? [y once/a session/p project/N/?]
//
// and reads the answer through the chat's one line reader, so the
// question and the REPL never read stdin at the same time. The guards
// decide what y and n mean (guard.Answer: only y or yes approves); a (or
// always) approves this call and every later call of the same tool of the
// same server for the rest of the session, without asking, and the answer
// is kept with the session (SessionApprovals) so --continue keeps it; p
// (or project), offered when the chat can write the project's permissions,
// allows the tool in this project from now on; ? (or help) explains the
// choices and asks again. End of input,
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

	// sessions keeps the "always" answers with the session; nil keeps
	// them in always, for this process only.
	sessions *host.SessionApprovals
	// project allows server's tool in this project from now on (the
	// local scope's permissions) and returns the file it wrote; nil does
	// not offer p.
	project func(server, tool string) (string, error)

	mu     sync.Mutex
	always map[string]bool // session, server and tool approved for the session
}

// maxHelpAsks bounds how often one question is asked again after ?.
const maxHelpAsks = 5

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
	session := agent.SessionFrom(ctx)
	key := session + "\x00" + req.Server + "\x00" + req.Tool
	c.mu.Lock()
	always := c.always[key]
	c.mu.Unlock()
	if always || c.sessions.Allowed(ctx, session, req.Server, req.Tool) {
		return guard.Decision{Approved: true, Reason: "approved by the user for the rest of the session"}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = guard.DefaultConfirmTimeout
	}
	// p is offered only where an allow rule decides: an ask rule or
	// AGENT_GUARD_CONFIRM asks whatever the allow list says.
	project := c.project != nil && req.Server != "" && req.Cause == guard.AskDefault
	choices := "[y once/a session/N/?] "
	if project {
		choices = "[y once/a session/p project/N/?] "
	}
	question := fmt.Sprintf("Allow %s with %s? %s", what, req.ArgsPreview(), choices)
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var line string
	var err error
	for asked := 0; ; asked++ {
		// The reader shows the question: a line editor as its prompt (it
		// would paint over text written before it), plain input by
		// writing it first.
		line, err = c.in.read(waitCtx, question, nil)
		if err != nil || asked == maxHelpAsks || !isHelp(line) {
			break
		}
		c.explain(what, req, project, timeout)
	}
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
		c.allowSession(ctx, session, key, req)
		return guard.Decision{Approved: true, Reason: "approved by the user for the rest of the session"}
	case "p", "project":
		if !project {
			break
		}
		c.allowSession(ctx, session, key, req)
		file, err := c.project(req.Server, req.Tool)
		if err != nil {
			fmt.Fprintf(c.out, "agentapp: warning: could not keep the answer for this project (%v); it holds for this session\n", err)
			return guard.Decision{Approved: true, Reason: "approved by the user for the rest of the session"}
		}
		fmt.Fprintf(c.out, "Allowed %s in this project from now on (%s:%s in the allow list of %s).\n", what, textsafe.Escape(req.Server), textsafe.Escape(req.Tool), file)
		return guard.Decision{Approved: true, Reason: "approved by the user for this project"}
	}
	return guard.Answer(line)
}

// isHelp reports whether an answer asks what the choices mean.
func isHelp(line string) bool {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "?", "h", "help":
		return true
	}
	return false
}

// explain writes what each answer does, for ?.
func (c *TerminalConfirmer) explain(what string, req guard.ConfirmRequest, project bool, timeout time.Duration) {
	fmt.Fprintf(c.out, "  y, yes      run this call once; the next call of this tool asks again\n")
	fmt.Fprintf(c.out, "  a, always   run it, and every call of %s in this session without asking (kept with the session: --continue too)\n", what)
	if project {
		fmt.Fprintf(c.out, "  p, project  run it, and allow %s:%s in this project from now on (written to your permissions for this project)\n", textsafe.Escape(req.Server), textsafe.Escape(req.Tool))
	}
	fmt.Fprintf(c.out, "  n, no       refuse (also Enter, or no answer within %v)\n", timeout)
	if req.Why != "" {
		fmt.Fprintf(c.out, "  asked because %s\n", textsafe.Escape(req.Why))
	}
}

// allowSession remembers "always" for the rest of session.
func (c *TerminalConfirmer) allowSession(ctx context.Context, session, key string, req guard.ConfirmRequest) {
	c.mu.Lock()
	if c.always == nil {
		c.always = map[string]bool{}
	}
	c.always[key] = true
	c.mu.Unlock()
	if c.sessions == nil {
		return
	}
	if err := c.sessions.Allow(ctx, session, req.Server, req.Tool); err != nil {
		fmt.Fprintf(c.out, "agentapp: warning: %v\n", err)
	}
}
