package chat

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/chzyer/readline"
)

// errPromptInterrupt is Ctrl-C pressed at the prompt (not during a turn).
var errPromptInterrupt = errors.New("interrupted at the prompt")

// lineSource yields the user's lines.
type lineSource interface {
	// readLine returns the next line without its line ending. At the end
	// of input it returns io.EOF; for Ctrl-C at the prompt it returns what
	// had been typed and errPromptInterrupt.
	readLine() (string, error)
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

func (p *plainSource) readLine() (string, error) {
	line, err := p.r.ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

func (p *plainSource) close() error { return nil }

// readlineSource edits lines on a terminal, with history (up and down
// arrows, Ctrl-R search) kept in a file across chats.
type readlineSource struct{ rl *readline.Instance }

func newReadlineSource(in *os.File, out, errw io.Writer, historyFile string) (*readlineSource, error) {
	fd := int(in.Fd())
	var saved *readline.State
	cfg := &readline.Config{
		Prompt:          "> ",
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

func (r *readlineSource) readLine() (string, error) {
	line, err := r.rl.Readline()
	if errors.Is(err, readline.ErrInterrupt) {
		return line, errPromptInterrupt
	}
	return line, err
}

func (r *readlineSource) close() error { return r.rl.Close() }
