package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// errPromptInterrupt is Ctrl-C pressed at the prompt (not during a turn).
var errPromptInterrupt = errors.New("interrupted at the prompt")

// lineSource yields the user's lines.
type lineSource interface {
	// readLine returns the next line without its line ending. At the end
	// of input it returns io.EOF; for Ctrl-C at the prompt it returns what
	// had been typed and errPromptInterrupt. prompt replaces the usual
	// prompt for this line when the source draws one; "" keeps it.
	readLine(prompt string) (string, error)
	// drawsPrompt reports whether the source shows prompts itself (a line
	// editor repainting the line); otherwise the caller writes them.
	drawsPrompt() bool
	close() error
}

// plainSource reads lines from a pipe or file: no prompt, no echo, no
// editing. A final line without a newline still counts.
type plainSource struct{ r *bufio.Reader }

func (p *plainSource) drawsPrompt() bool { return false }

func (p *plainSource) readLine(string) (string, error) {
	line, err := p.r.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (p *plainSource) close() error { return nil }

// replPrompt is the REPL's prompt on a terminal.
const replPrompt = "> "

// editor is a lineSource that owns the terminal line while it reads (a
// line editor): it can change the prompt of the read in progress, and
// text for the terminal must go through it while it reads, or its next
// redraw paints over the text (or paints a stale prompt under it).
type editor interface {
	// showPrompt shows prompt ("" for the REPL prompt) for the read in
	// progress and draws the line again, below whatever was written since.
	showPrompt(prompt string)
	// retire ends a question that is the prompt of the read in progress
	// and that nobody waits for any more: the question stays on the screen
	// on a line of its own, what was typed for it is dropped, and the read
	// goes on under the REPL prompt, so the next line is plainly a chat
	// message.
	retire(question string)
	// writeAbove writes p on lines of its own above the line being edited,
	// which is drawn again below it.
	writeAbove(p []byte) (int, error)
}

// lineReader is the one reader of the user's lines: the REPL's prompts and
// the guards' confirmation questions (TerminalConfirmer) both read through
// it, so they never read stdin at the same time and no keystroke goes to
// the wrong one.
//
// A read that is abandoned (Ctrl-C at the prompt, a confirmation that timed
// out) is not lost: the line it was waiting for goes to the next read, in
// order. Reads are lazy, one line per request, because a line editor
// starting a read puts the terminal in raw mode and draws a prompt, which
// must not happen while an answer streams. The end of input is sticky.
//
// With a line editor the read in progress shows the prompt of whoever
// waits for it: a confirmation question that is abandoned (it timed out,
// or the call was cancelled) is retired at once, so the line goes on under
// the REPL prompt and nothing typed afterwards looks like an answer to
// it; and the next read that takes the line over draws its own prompt
// again, below whatever the turn printed meanwhile.
type lineReader struct {
	errw io.Writer     // where questions go when the source draws no prompt
	turn chan struct{} // one reader at a time

	mu      sync.Mutex
	src     lineSource
	pending chan lineResult // the read in progress, if any
	shown   string          // the prompt the read in progress shows ("" is the REPL's)
	end     error           // the source's final error (io.EOF)
}

type lineResult struct {
	line string
	err  error
}

func newLineReader(errw io.Writer) *lineReader {
	return &lineReader{errw: errw, turn: make(chan struct{}, 1)}
}

// use sets the source, unless one is set already.
func (r *lineReader) use(src lineSource) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.src == nil {
		r.src = src
	}
}

// read returns the next line. prompt, when not empty, is shown for this
// line: a line editor shows it as its prompt, otherwise it is written to
// the error stream first. read gives up with ctx's error when ctx ends,
// and with errPromptInterrupt when intr delivers (Ctrl-C as a signal).
func (r *lineReader) read(ctx context.Context, prompt string, intr <-chan os.Signal) (string, error) {
	select {
	case r.turn <- struct{}{}:
		defer func() { <-r.turn }()
	case <-ctx.Done():
		return "", ctx.Err()
	case <-intr:
		return "", errPromptInterrupt
	}
	r.mu.Lock()
	if r.end != nil {
		err := r.end
		r.mu.Unlock()
		return "", err
	}
	if r.src == nil {
		r.mu.Unlock()
		return "", errors.New("no input to read the answer from")
	}
	if prompt != "" && !r.src.drawsPrompt() {
		fmt.Fprint(r.errw, prompt)
	}
	ch := r.pending
	if ch == nil {
		ch = make(chan lineResult, 1)
		r.pending = ch
		src := r.src
		go func() {
			l, err := src.readLine(prompt)
			ch <- lineResult{l, err}
		}()
	} else if ed, ok := r.src.(editor); ok {
		// The read was started for someone else, and output may have come
		// since: show this reader's prompt, on a line of its own.
		ed.showPrompt(prompt)
	}
	r.shown = prompt
	r.mu.Unlock()
	select {
	case res := <-ch:
		r.mu.Lock()
		r.pending = nil
		r.shown = ""
		if res.err != nil && !errors.Is(res.err, errPromptInterrupt) {
			r.end = res.err
		}
		r.mu.Unlock()
		return res.line, res.err
	case <-ctx.Done():
		r.abandon(ch, prompt)
		return "", ctx.Err()
	case <-intr:
		r.abandon(ch, prompt)
		return "", errPromptInterrupt
	}
}

// abandon is a reader giving up the read ch that showed prompt: a question
// is retired from a line editor's prompt, so the line goes on under the
// REPL prompt.
func (r *lineReader) abandon(ch chan lineResult, prompt string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prompt == "" || r.pending != ch || r.shown != prompt {
		return
	}
	if ed, ok := r.src.(editor); ok {
		ed.retire(prompt)
	}
	r.shown = ""
}

// noteWriter returns where the confirmer writes its notes (a refusal, a
// timeout): through the line editor while it reads, so a note lands on its
// own line above the prompt instead of under a prompt the editor will
// redraw; else straight to the error stream.
func (r *lineReader) noteWriter() io.Writer { return noteWriter{r} }

type noteWriter struct{ r *lineReader }

func (w noteWriter) Write(p []byte) (int, error) {
	w.r.mu.Lock()
	src := w.r.src
	w.r.mu.Unlock()
	if ed, ok := src.(editor); ok {
		return ed.writeAbove(p)
	}
	return w.r.errw.Write(p)
}
