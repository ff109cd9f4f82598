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
//
// A socket cannot be reopened, and it is what hosts built on Node.js hand a
// server (child_process's stdio "pipe" is a socketpair): the official
// TypeScript SDK client, so Claude Desktop, Claude Code, Cursor and the
// Inspector. A blocking read on it parked a thread per message, which is
// what made a sequential call through that client slower than the
// reference server's (bench/NOTES.md has the system-call counts and the
// A/B). Its own description is switched to non-blocking mode instead, and
// back by Close; it is left alone when stdout or stderr is the same socket,
// since the runtime writes those without the poller and would see EAGAIN.
//
// Anything else (a terminal, a regular file, no /proc) is returned as it
// is. Close closes both descriptors.
func pollableStdin() io.ReadCloser {
	r, err := reopenPollable(os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		return os.Stdin
	}
	return r
}

// reopenPollable reopens the pipe or socket f for reading in non-blocking
// mode, which makes the new *os.File pollable (see pollableStdin). A socket
// that is also one of writers (the process's stdout and stderr) is
// refused. Closing the result closes f too.
func reopenPollable(f *os.File, writers ...*os.File) (io.ReadCloser, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		return nil, err
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
	case syscall.S_IFSOCK:
		return pollableSocket(f, st, writers)
	default:
		return nil, errors.New("neither a pipe nor a socket")
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

// pollableSocket makes a pollable *os.File of the socket f (whose Fstat is
// st): a duplicate descriptor, with the socket's description switched to
// non-blocking mode until Close, which switches it back if it was
// blocking. The duplicate shares the description with f, so the switch
// cannot be avoided; it is refused when one of writers is the same socket.
func pollableSocket(f *os.File, st syscall.Stat_t, writers []*os.File) (io.ReadCloser, error) {
	for _, w := range writers {
		var ws syscall.Stat_t
		if w != nil && syscall.Fstat(int(w.Fd()), &ws) == nil && ws.Dev == st.Dev && ws.Ino == st.Ino {
			return nil, errors.New("the socket is also an output")
		}
	}
	orig := int(f.Fd())
	flags, err := fcntl(orig, syscall.F_GETFL, 0)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Dup(orig)
	if err != nil {
		return nil, err
	}
	restore := flags&syscall.O_NONBLOCK == 0
	if restore {
		if err := syscall.SetNonblock(fd, true); err != nil {
			syscall.Close(fd)
			return nil, err
		}
	}
	// os.NewFile sees the descriptor in non-blocking mode and registers it
	// with the poller.
	return &reopenedSocket{File: os.NewFile(uintptr(fd), f.Name()), orig: f, restore: restore}, nil
}

// reopenedSocket is a socket made pollable by pollableSocket.
type reopenedSocket struct {
	*os.File
	orig    *os.File
	restore bool // switch the description back to blocking mode on Close
}

func (s *reopenedSocket) Close() error {
	// The pollable descriptor first: its Close returns once every Read on
	// it has, so none reads after the switch back. Then the description,
	// through orig, which shares it.
	err := s.File.Close()
	if s.restore {
		err = errors.Join(err, syscall.SetNonblock(int(s.orig.Fd()), false))
	}
	return errors.Join(err, s.orig.Close())
}

func fcntl(fd, cmd, arg int) (int, error) {
	v, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}
