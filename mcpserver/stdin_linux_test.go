package mcpserver

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// blockingPipe returns a pipe in blocking mode, as a parent process hands
// one to a child's stdin (os.Pipe's are non-blocking already).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	if err := syscall.Pipe(fds[:]); err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	var flags int
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		flags, err = fcntlGetfl(fd)
	})
	if err != nil {
		t.Fatal(err)
	}
	return flags&syscall.O_NONBLOCK != 0
}

func fcntlGetfl(fd uintptr) (int, error) {
	v, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(v), nil
}

// TestReopenPollable checks that a blocking pipe comes back pollable (a
// read deadline works only on a file the runtime's poller waits on), that
// the original descriptor stays in blocking mode for whoever shares it,
// that data and the end of input come through, and that Close closes both.
func TestReopenPollable(t *testing.T) {
	r, w := blockingPipe(t)
	defer w.Close()
	if nonblocking(t, r) {
		t.Fatal("the test pipe is already non-blocking")
	}
	p, err := reopenPollable(r)
	if err != nil {
		t.Fatal(err)
	}
	f := p.(*reopenedPipe).File
	if err := f.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the reopened pipe is not pollable: %v", err)
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with a deadline and no data: %v, want a deadline error", err)
	}
	f.SetReadDeadline(time.Time{})
	if nonblocking(t, r) {
		t.Fatal("reopening switched the original descriptor to non-blocking mode")
	}
	io.WriteString(w, "hello\n")
	w.Close()
	got, err := io.ReadAll(p)
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("read %q, %v; want the data, then the end of input", got, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stat(); err == nil {
		t.Fatal("Close left the original descriptor open")
	}
}

// TestReopenPollableWriterGone checks that reopening does not wait for a
// writer when the client has already closed its end.
func TestReopenPollableWriterGone(t *testing.T) {
	r, w := blockingPipe(t)
	io.WriteString(w, "last\n")
	w.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, err := reopenPollable(r)
		if err != nil {
			t.Error(err)
			return
		}
		defer p.Close()
		got, err := io.ReadAll(p)
		if err != nil || string(got) != "last\n" {
			t.Errorf("read %q, %v", got, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("reopening a pipe without a writer hung")
	}
}

// TestReopenPollableRefusesNonPipes checks that anything but a pipe is
// left alone.
func TestReopenPollableRefusesNonPipes(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := reopenPollable(f); err == nil {
		t.Fatal("a regular file was reopened")
	}
}

// blockingSocketpair returns the two ends of a Unix socketpair in blocking
// mode, as Node.js's child_process hands one to a child's stdin.
func blockingSocketpair(t *testing.T) (a, b *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	return os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
}

// TestReopenPollableSocket checks that a blocking socket comes back
// pollable, that data and the end of input come through, and that Close
// switches the socket back to blocking mode (seen through a duplicate
// that shares its description, as another process would) and closes it.
func TestReopenPollableSocket(t *testing.T) {
	r, w := blockingSocketpair(t)
	defer w.Close()
	if nonblocking(t, r) {
		t.Fatal("the test socket is already non-blocking")
	}
	shared, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	sharedF := os.NewFile(uintptr(shared), "shared")
	defer sharedF.Close()
	p, err := reopenPollable(r)
	if err != nil {
		t.Fatalf("a socket was refused: %v", err)
	}
	f := p.(*reopenedSocket).File
	if err := f.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("the socket is not pollable: %v", err)
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with a deadline and no data: %v, want a deadline error", err)
	}
	f.SetReadDeadline(time.Time{})
	io.WriteString(w, "hello\n")
	w.Close()
	got, err := io.ReadAll(p)
	if err != nil || string(got) != "hello\n" {
		t.Fatalf("read %q, %v; want the data, then the end of input", got, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if nonblocking(t, sharedF) {
		t.Fatal("Close left the socket in non-blocking mode")
	}
	if _, err := r.Stat(); err == nil {
		t.Fatal("Close left the original descriptor open")
	}
}

// TestReopenPollableSocketAlsoOutput checks that a socket that is also the
// process's output (stdin and stdout one socket, as inetd hands them) is
// left alone: the runtime writes stdout without the poller and would get
// EAGAIN from a non-blocking socket.
func TestReopenPollableSocketAlsoOutput(t *testing.T) {
	r, w := blockingSocketpair(t)
	defer w.Close()
	defer r.Close()
	dup, err := syscall.Dup(int(r.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	out := os.NewFile(uintptr(dup), "stdout")
	defer out.Close()
	if p, err := reopenPollable(r, nil, out); err == nil {
		p.Close()
		t.Fatal("a socket that is also an output was reopened")
	}
	if nonblocking(t, r) {
		t.Fatal("refusing the socket switched it to non-blocking mode")
	}
}
