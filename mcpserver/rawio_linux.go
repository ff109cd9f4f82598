package mcpserver

import (
	"io"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// The stdio server's reads and writes, without waking the runtime's
// monitor thread.
//
// Every read(2) and write(2) through an *os.File tells the scheduler that
// the goroutine enters a system call (entersyscall), in case it blocks.
// When the server was idle between two calls, every processor was idle
// and the monitor thread (sysmon) had parked itself; entering a system
// call wakes it (a futex wake on the serving thread), and it then ticks
// every 20 µs (a nanosleep each, on the client's core) until the server is
// idle again. With a client that sends one call at a time, that was every
// call: about a sixth of the server's CPU per call through the TypeScript
// SDK client (bench/NOTES.md has the profile and the A/B).
//
// A read of a descriptor in non-blocking mode and a send with MSG_DONTWAIT
// cannot block, so they need no such notice: they are made here as raw
// system calls. A read that finds nothing waits in the poller as before;
// a send that cannot finish at once (the client is not reading) hands
// what is left to the *os.File, whose write blocks with the scheduler's
// knowledge, and reports errors as before.

// rawReader reads a pollable descriptor in non-blocking mode (see
// pollableStdin) with raw read(2)s; Close closes the underlying reader.
type rawReader struct {
	io.ReadCloser // the reopened stdin, for Close
	name          string
	rc            syscall.RawConn

	mu     sync.Mutex // one Read at a time: the fields below are its state
	p      []byte
	n      int
	errno  syscall.Errno
	readFn func(fd uintptr) bool // r.readFD, made once
	// spinUntil, when set, is how long readFD keeps trying before it
	// parks in the poller; quick is whether the last read found its data
	// within spinFor (see Read).
	spinUntil time.Time
	quick     bool
	spin      time.Duration // spinFor; tests set their own
	parks     int           // reads that waited in the poller, for tests
}

// spinFor is how long a read keeps polling the descriptor before it parks,
// when the previous request came within that time. A client with calls in
// flight sends the next request while the answer to the last is being
// written; a reader parked in the poller makes each of the client's writes
// wake it (on this 2-core virtual machine a cross-core wake-up is several
// µs of the client's CPU, and the client sets the pace there). A client
// that sends one call at a time leaves gaps far longer than this, so the
// reader parks at once and the idle server costs nothing (bench/NOTES.md).
const spinFor = 30 * time.Microsecond

// newRawReader returns r reading through raw system calls when r is an
// *os.File (or wraps one) whose descriptor is in non-blocking mode, and r
// itself otherwise.
func newRawReader(r io.ReadCloser) io.ReadCloser {
	var f *os.File
	switch v := r.(type) {
	case *reopenedPipe:
		f = v.File
	case *reopenedSocket:
		f = v.File
	default:
		return r
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return r
	}
	nonblock := false
	if rc.Control(func(fd uintptr) {
		flags, err := fcntl(int(fd), syscall.F_GETFL, 0)
		nonblock = err == nil && flags&syscall.O_NONBLOCK != 0
	}) != nil || !nonblock {
		return r
	}
	rr := &rawReader{ReadCloser: r, name: f.Name(), rc: rc, spin: spinFor}
	rr.readFn = rr.readFD
	return rr
}

// readFD is the RawConn callback: false means "nothing to read yet, wait
// in the poller and call again".
func (r *rawReader) readFD(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.p[0])), uintptr(len(r.p)))
		switch e {
		case 0:
			r.n = int(n)
			return true
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			if r.spinUntil.IsZero() || time.Now().After(r.spinUntil) {
				r.parks++
				return false
			}
			// Let the workers write their answers meanwhile: on one
			// processor the reader must not hold it.
			runtime.Gosched()
			continue
		default:
			r.errno = e
			return true
		}
	}
}

// Read implements io.Reader as os.File's Read does: 0 bytes read from a
// non-empty p is the end of the input.
func (r *rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(p) > 1<<30 {
		p = p[:1<<30]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.p, r.n, r.errno = p, 0, 0
	start := time.Now()
	r.spinUntil = time.Time{}
	if r.quick {
		r.spinUntil = start.Add(r.spin)
	}
	err := r.rc.Read(r.readFn)
	r.quick = time.Since(start) < r.spin
	n, errno := r.n, r.errno
	r.p = nil
	switch {
	case err != nil: // closed, or the poller failed
		return 0, &os.PathError{Op: "read", Path: r.name, Err: err}
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.name, Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawSocketWriter writes to a socket (what a Node.js host hands a server
// as its stdout) with send(2) and MSG_DONTWAIT, which leaves the socket's
// shared description in blocking mode; what cannot be sent at once, and
// any error, goes to the *os.File's Write, so that a client that stops
// reading holds the writer as before and a broken pipe is reported (and
// raises SIGPIPE) as before.
type rawSocketWriter struct {
	f  *os.File
	rc syscall.RawConn

	mu     sync.Mutex // one Write at a time: the fields below are its state
	p      []byte
	n      int
	sendFn func(fd uintptr) bool // w.sendFD, made once
}

// newStdoutWriter returns a rawSocketWriter on f when f is a socket, and f
// otherwise.
func newStdoutWriter(f *os.File) io.Writer {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	socket := false
	if rc.Control(func(fd uintptr) {
		var st syscall.Stat_t
		socket = syscall.Fstat(int(fd), &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFSOCK
	}) != nil || !socket {
		return f
	}
	w := &rawSocketWriter{f: f, rc: rc}
	w.sendFn = w.sendFD
	return w
}

// sendFD sends as much of w.p as the socket takes without waiting.
func (w *rawSocketWriter) sendFD(fd uintptr) bool {
	for w.n < len(w.p) {
		n, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&w.p[w.n])), uintptr(len(w.p)-w.n),
			syscall.MSG_DONTWAIT|syscall.MSG_NOSIGNAL, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			break
		}
		w.n += int(n)
	}
	return true
}

// Write implements io.Writer.
func (w *rawSocketWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.p, w.n = p, 0
	err := w.rc.Write(w.sendFn)
	n := w.n
	w.p = nil
	if err == nil && n == len(p) {
		return n, nil
	}
	m, err := w.f.Write(p[n:])
	return n + m, err
}
