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

	"github.com/chzyer/readline"
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

// terminalFd returns the descriptor of r when it is a terminal.
func terminalFd(r any) (int, bool) {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, readline.IsTerminal(fd)
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

// readlineSource edits lines on a terminal, with history (up and down
// arrows, Ctrl-R search) kept in a file across chats.
type readlineSource struct{ rl *readline.Instance }

func newReadlineSource(in *os.File, out, errw io.Writer, historyFile string) (*readlineSource, error) {
	fd := int(in.Fd())
	var saved *readline.State
	cfg := &readline.Config{
		Prompt:          replPrompt,
		HistoryFile:     historyFile,
		HistoryLimit:    1000,
		InterruptPrompt: "^C",
		EOFPrompt:       "\n",
		Stdin:           readline.NewCancelableStdin(in),
		Stdout:          out,
		Stderr:          errw,
		FuncIsTerminal:  func() bool { return true },
		FuncMakeRaw: func() error {
			st, err := readline.MakeRaw(fd)
			if err == nil {
				saved = st
			}
			return err
		},
		FuncExitRaw: func() error {
			if saved == nil {
				return nil
			}
			return readline.Restore(fd, saved)
		},
		FuncGetWidth: func() int {
			w, _, err := readline.GetSize(fd)
			if err != nil || w <= 0 {
				return 80
			}
			return w
		},
	}
	rl, err := readline.NewEx(cfg)
	if err != nil {
		return nil, err
	}
	return &readlineSource{rl: rl}, nil
}

func (r *readlineSource) drawsPrompt() bool { return true }

func (r *readlineSource) readLine(prompt string) (string, error) {
	if prompt != "" {
		r.rl.SetPrompt(prompt)
		defer r.rl.SetPrompt(replPrompt)
	}
	line, err := r.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return line, errPromptInterrupt
	}
	return line, err
}

func (r *readlineSource) close() error { return r.rl.Close() }

// lineReader is the one reader of the user's lines: the REPL's prompts and
// the guards' confirmation questions both read through it (it is the
// guard.LineReader of the chat's confirmer), so they never read stdin at
// the same time and no keystroke goes to the wrong one.
//
// A read that is abandoned (Ctrl-C at the prompt, a confirmation that timed
// out) is not lost: the line it was waiting for goes to the next read, in
// order. Reads are lazy, one line per request, because a line editor
// starting a read puts the terminal in raw mode and draws a prompt, which
// must not happen while an answer streams. The end of input is sticky.
type lineReader struct {
	errw io.Writer     // where questions go when the source draws no prompt
	turn chan struct{} // one reader at a time

	mu      sync.Mutex
	src     lineSource
	pending chan lineResult // the read in progress, if any
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

// ReadLine implements guard.LineReader.
func (r *lineReader) ReadLine(ctx context.Context) (string, error) {
	return r.read(ctx, "", nil)
}

// ReadLinePrompt implements guard.PromptReader: a line editor shows the
// question as its prompt (it would paint over text written before it);
// otherwise the question is written to the error stream first.
func (r *lineReader) ReadLinePrompt(ctx context.Context, prompt string) (string, error) {
	return r.read(ctx, prompt, nil)
}

// read returns the next line. It gives up with ctx's error when ctx ends,
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
	ch := r.pending
	if ch == nil {
		if prompt != "" && !r.src.drawsPrompt() {
			fmt.Fprint(r.errw, prompt)
		}
		ch = make(chan lineResult, 1)
		r.pending = ch
		src := r.src
		go func() {
			l, err := src.readLine(prompt)
			ch <- lineResult{l, err}
		}()
	}
	r.mu.Unlock()
	select {
	case res := <-ch:
		r.mu.Lock()
		r.pending = nil
		if res.err != nil && !errors.Is(res.err, errPromptInterrupt) {
			r.end = res.err
		}
		r.mu.Unlock()
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-intr:
		return "", errPromptInterrupt
	}
}
