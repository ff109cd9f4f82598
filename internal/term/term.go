// Package term is the program's one test for an interactive terminal. The
// chat asks it whether to edit lines and whether anybody can answer a
// confirmation question (stdin), and whether to draw a spinner (stderr);
// the knowledge-base ingest asks it whether to draw a progress bar. One
// test keeps those answers from disagreeing about the same stream.
package term

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether v, a program's input or output stream, is an
// *os.File open on a terminal. Any other value, such as a pipe wrapped in a
// buffer or a test's bytes.Buffer, is not a terminal.
//
// It asks the terminal driver rather than looking for a character device,
// so /dev/null, which is a character device but not a terminal, is not one.
// It reads the descriptor through the file's raw connection, which leaves
// the file's blocking mode alone (os.File.Fd would switch it to blocking).
func IsTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	if err := rc.Control(func(fd uintptr) { is = term.IsTerminal(int(fd)) }); err != nil {
		return false
	}
	return is
}
