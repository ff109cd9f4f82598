package mcpserver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// pollableStdin returns the server's standard input reopened so that the Go
// runtime's network poller can wait on it, when stdin is a pipe.
//
// os.Stdin is left in blocking mode, so a read that waits for the client
// parks an OS thread in the kernel; the scheduler then has to hand that
// thread's processor to another thread and take it back when the message
// arrives, on every message, which is costly with a client that keeps calls
// in flight (bench/NOTES.md has the figures). A descriptor in non-blocking
// mode waits in the poller like a socket instead.
//
// The pipe is reopened through /proc/self/fd/0 rather than switched in
// place: O_NONBLOCK belongs to the open file description, which other
// processes may share (a shell's `a | (agentapp serve; b)` hands the same
// pipe to b afterwards), and a reopened FIFO gets a description of its own.
// Anything else (a terminal, a regular file, a socket, no /proc) is
// returned as it is. Close closes both descriptors.
func pollableStdin() io.ReadCloser {
	r, err := reopenPollable(os.Stdin)
	if err != nil {
		return os.Stdin
	}
	return r
}

// reopenPollable reopens the pipe f for reading in non-blocking mode,
// which makes the new *os.File pollable. Closing the result closes f too.
func reopenPollable(f *os.File) (io.ReadCloser, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return nil, errors.New("not a pipe")
	}
	// O_NONBLOCK also keeps the open from waiting for a writer when the
	// client has already closed its end: reads then see the end of input.
	p, err := os.OpenFile(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	return &reopenedPipe{File: p, orig: f}, nil
}

// reopenedPipe is a pipe reopened by reopenPollable.
type reopenedPipe struct {
	*os.File
	orig *os.File
}

func (p *reopenedPipe) Close() error {
	return errors.Join(p.File.Close(), p.orig.Close())
}
