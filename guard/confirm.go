package guard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// DefaultConfirmTimeout is how long the terminal confirmer waits for an
// answer before refusing.
const DefaultConfirmTimeout = 60 * time.Second

// ConfirmRequest is a tool call waiting for the user's approval.
type ConfirmRequest struct {
	Tool   string
	Server string
	Args   json.RawMessage
}

// Decision is the outcome of a confirmation. Reason says in words how it
// came about (for the audit log and for the model when refused).
type Decision struct {
	Approved bool
	Reason   string
}

// Confirmer asks the user whether a tool call may run. Implementations must
// refuse when in doubt and must honour ctx.
type Confirmer interface {
	Confirm(ctx context.Context, req ConfirmRequest) Decision
}

// LineReader yields lines of user input, without the line ending. It
// returns io.EOF at the end of input and ctx's error when ctx ends first.
type LineReader interface {
	ReadLine(ctx context.Context) (string, error)
}

// PromptReader is a LineReader that draws its own prompt, such as a line
// editor that owns the terminal and repaints the whole line. A
// TerminalConfirmer hands such a reader the question as the prompt instead
// of writing it to Out first, where the editor would paint over it.
type PromptReader interface {
	LineReader
	ReadLinePrompt(ctx context.Context, prompt string) (string, error)
}

// Lines reads lines from a reader in one background goroutine, so that a
// wait can be abandoned (a confirmation timeout, a cancelled call) without
// leaving a stray read behind that would steal the user's next line. A
// program should read its prompts through the same reader as the
// confirmer: then a line typed after a confirmation timed out goes to the
// next reader in order instead of being lost. Safe for concurrent use; each line goes
// to one caller. The goroutine lives until the reader ends, which for
// stdin is the life of the program.
type Lines struct {
	r     io.Reader
	start sync.Once
	ch    chan string
	done  chan struct{}
	err   error // set before done is closed
}

// NewLines returns a line reader over r. Nothing is read until the first
// ReadLine.
func NewLines(r io.Reader) *Lines {
	return &Lines{r: r, ch: make(chan string), done: make(chan struct{})}
}

// ReadLine returns the next line.
func (l *Lines) ReadLine(ctx context.Context) (string, error) {
	l.start.Do(func() { go l.pump() })
	select {
	case s := <-l.ch:
		return s, nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-l.done:
		// ch is unbuffered, so every line was taken before done closed.
		return "", l.err
	}
}

func (l *Lines) pump() {
	br := bufio.NewReader(l.r)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			l.ch <- strings.TrimRight(s, "\r\n")
		}
		if err != nil {
			l.err = err
			close(l.done)
			return
		}
	}
}

// TerminalConfirmer asks on a terminal: it writes
//
//	Allow tool X (server S) with {"a":1}? [y/N]
//
// to Out (stderr in the chat) and reads the answer from In. Only y or yes,
// in any case and with surrounding space, approves. End of input, no answer
// within Timeout, a cancelled call, anything else typed, and a
// non-interactive stdin all refuse. Questions are asked one at a time even
// when the model runs calls concurrently.
type TerminalConfirmer struct {
	// In supplies the answers.
	In LineReader
	// Out receives the questions.
	Out io.Writer
	// Interactive must be true for a question to be asked; otherwise every
	// call is refused with a note on Out, since nobody can answer.
	Interactive bool
	// Timeout bounds the wait for an answer; 0 means
	// DefaultConfirmTimeout.
	Timeout time.Duration

	turn chan struct{} // one question at a time
	once sync.Once
}

// NewTerminalConfirmer returns a confirmer asking on out and reading
// answers from in. interactive says whether stdin is a terminal.
func NewTerminalConfirmer(in LineReader, out io.Writer, interactive bool) *TerminalConfirmer {
	return &TerminalConfirmer{In: in, Out: out, Interactive: interactive}
}

// maxPreviewRunes bounds the argument preview in questions and the audit
// log.
const maxPreviewRunes = 200

// Confirm asks whether req may run.
func (c *TerminalConfirmer) Confirm(ctx context.Context, req ConfirmRequest) Decision {
	what := describeCall(req.Tool, req.Server)
	if !c.Interactive || c.In == nil {
		fmt.Fprintf(c.Out, "guard: %s needs confirmation but stdin is not a terminal: refused\n", what)
		return Decision{Reason: "stdin is not a terminal, so nobody could confirm"}
	}
	c.once.Do(func() { c.turn = make(chan struct{}, 1) })
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		return Decision{Reason: "the call was cancelled before it could be confirmed"}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultConfirmTimeout
	}
	question := fmt.Sprintf("Allow %s with %s? [y/N] ", what, Preview(req.Args))
	waitCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var line string
	var err error
	if pr, ok := c.In.(PromptReader); ok {
		line, err = pr.ReadLinePrompt(waitCtx, question)
	} else {
		fmt.Fprint(c.Out, question)
		line, err = c.In.ReadLine(waitCtx)
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		fmt.Fprintf(c.Out, "\nno answer within %v: refused\n", timeout)
		return Decision{Reason: fmt.Sprintf("no answer within %v", timeout)}
	case ctx.Err() != nil:
		fmt.Fprintln(c.Out, "\ncancelled: refused")
		return Decision{Reason: "the call was cancelled while waiting for confirmation"}
	case errors.Is(err, io.EOF):
		fmt.Fprintln(c.Out, "\nend of input: refused")
		return Decision{Reason: "end of input before an answer"}
	default:
		fmt.Fprintf(c.Out, "\ncannot read the answer (%v): refused\n", err)
		return Decision{Reason: "cannot read the answer: " + err.Error()}
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return Decision{Approved: true, Reason: "approved by the user"}
	}
	return Decision{Reason: "the user answered " + strconv.Quote(clip(line)) + ", not yes"}
}

// describeCall names a tool and its server for a person to read. Names come
// from the server, so they are made printable first.
func describeCall(tool, server string) string {
	if server == "" {
		return "tool " + printable(tool)
	}
	return "tool " + printable(tool) + " (server " + printable(server) + ")"
}

// Preview shows tool arguments compactly for a question or the audit log:
// compact JSON (or the raw text if it is not JSON), cut to 200 runes, with
// control and formatting characters (terminal escapes, bidirectional
// overrides) shown as \u escapes so a hostile server or argument cannot
// repaint the question.
func Preview(args json.RawMessage) string {
	t := strings.TrimSpace(string(args))
	if t == "" || t == "null" {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(t)); err == nil {
		t = b.String()
	}
	t = printable(t)
	if utf8.RuneCountInString(t) > maxPreviewRunes {
		t = string([]rune(t)[:maxPreviewRunes]) + "…"
	}
	return t
}

// printable replaces control and format characters and invalid bytes with
// visible escapes.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += w
	}
	return b.String()
}
