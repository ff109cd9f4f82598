//go:build linux

package mcpbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// live holds the process groups started and not yet killed, so that
// KillAll can end them when the harness is interrupted.
var live struct {
	sync.Mutex
	groups map[int]bool
}

// KillAll sends SIGKILL to every process group the harness started and has
// not ended yet. The command calls it on SIGINT/SIGTERM before exiting.
func KillAll() {
	live.Lock()
	defer live.Unlock()
	for pgid := range live.groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// Server is one running stdio MCP server in its own process group, with a
// raw JSON-RPC connection on its stdin/stdout.
type Server struct {
	cmd     *exec.Cmd
	pgid    int
	stdin   *os.File
	stderr  *os.File // a temporary file: no copying goroutine, kept for errors
	exited  chan struct{}
	waitErr error

	wmu  sync.Mutex
	wbuf []byte

	mu      sync.Mutex
	pending map[int64]chan<- Message
	nextID  atomic.Int64
	readErr error
	readEnd chan struct{}
	batch   atomic.Pointer[batch] // requests the reader answers itself

	notifications atomic.Int64
	serverReqs    atomic.Int64
}

// Start starts argv[0] with argv[1:] in a new process group, its stdin and
// stdout connected to the harness and its stderr to a temporary file.
// Nothing is sent yet. Call Kill when done, whatever happened.
func Start(argv []string, env []string) (*Server, error) {
	if len(argv) == 0 {
		return nil, errors.New("no server command")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := blockingPipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errF, err := os.CreateTemp("", "mcpbench-stderr-*")
	if err != nil {
		closeFiles(inR, inW, outR, outW)
		return nil, err
	}
	os.Remove(errF.Name()) // the open descriptor is enough
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errF
	cmd.SysProcAttr = sysProcAttr()
	s := &Server{
		cmd: cmd, stdin: inW, stderr: errF,
		exited:  make(chan struct{}),
		pending: make(map[int64]chan<- Message),
		readEnd: make(chan struct{}),
	}
	live.Lock()
	if err := cmd.Start(); err != nil {
		live.Unlock()
		closeFiles(inR, inW, outR, outW, errF)
		return nil, fmt.Errorf("cannot start %s: %w", argv[0], err)
	}
	s.pgid = cmd.Process.Pid // Setpgid with Pgid 0: the group is the child's pid
	if live.groups == nil {
		live.groups = make(map[int]bool)
	}
	live.groups[s.pgid] = true
	live.Unlock()
	closeFiles(inR, outW) // the child's ends
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	go s.readLoop(outR)
	return s, nil
}

// blockingPipe is os.Pipe without the runtime's poller. A read of os.Pipe's
// read end that finds the pipe empty returns EAGAIN, parks the goroutine
// and leaves it to the runtime to wait in epoll, wake a thread (futex)
// and read again; sysmon, which sleeps while every P is idle, is woken
// too. The reader goroutine reads the server's stdout through this pipe
// instead: its thread blocks in read(2) and the kernel wakes it with the
// data, the runtime taking no part. The price: closing the read end
// would not interrupt a blocked read. Only the reader closes it, once it
// has read EOF, which comes when the server's process group, holding the
// only write ends, is dead (a process that left the group with the pipe
// would keep the reader goroutine blocked until the harness exits).
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// PGID returns the server's process group id (its leader's pid).
func (s *Server) PGID() int { return s.pgid }

// Kill ends the whole process group with SIGKILL, reaps the leader and
// releases the pipes. It is safe to call more than once, and after the
// server exited by itself (group members it left behind are killed too).
func (s *Server) Kill() {
	_ = syscall.Kill(-s.pgid, syscall.SIGKILL)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		// A leader that survives SIGKILL is in uninterruptible sleep; it
		// is still in the group and will die when the kernel lets it.
	}
	live.Lock()
	delete(live.groups, s.pgid)
	live.Unlock()
	s.stdin.Close()
	s.stderr.Close()
}

// StderrTail returns the last n bytes the server wrote on stderr.
func (s *Server) StderrTail(n int64) string {
	fi, err := s.stderr.Stat()
	if err != nil {
		return ""
	}
	off := max(fi.Size()-n, 0)
	buf := make([]byte, fi.Size()-off)
	k, _ := s.stderr.ReadAt(buf, off)
	return strings.TrimSpace(string(buf[:k]))
}

func (s *Server) readLoop(r *os.File) {
	defer r.Close()
	br := bufio.NewReaderSize(r, 64<<10)
	var err error
	yielded := time.Now()
	for err == nil {
		var frame []byte
		if frame, err = ReadFrame(br, MaxFrame); err == nil {
			err = s.handle(frame)
		}
		// The reads block in the kernel, not in the scheduler, so this
		// goroutine never yields by itself. After 10 ms without a
		// scheduling point the runtime's monitor thread (sysmon) would
		// preempt it and then poll every 20 µs for a millisecond, over
		// and over. A yield wakes a thread too, so it comes no more often
		// than needed.
		if time.Since(yielded) >= 5*time.Millisecond {
			runtime.Gosched()
			yielded = time.Now()
		}
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	s.mu.Lock()
	s.readErr = err
	s.mu.Unlock()
	close(s.readEnd)
}

// handle deals with one frame the server wrote; an error ends the reading.
func (s *Server) handle(frame []byte) error {
	m, err := decodeFrame(frame)
	if err != nil {
		return err
	}
	switch {
	case m.IsResponse():
		id, ok := m.NumericID()
		if b := s.batch.Load(); ok && b != nil && b.owns(id) {
			return b.answer(id, m)
		}
		s.mu.Lock()
		ch := s.pending[id]
		delete(s.pending, id)
		s.mu.Unlock()
		if !ok || ch == nil {
			return fmt.Errorf("response to an id we did not send: %s", m.ID)
		}
		// m may point into the reader's buffer.
		m.ID, m.Result = bytes.Clone(m.ID), bytes.Clone(m.Result)
		ch <- m
	case m.IsRequest():
		// We declared no client capabilities; refuse whatever the
		// server asks (sampling, roots, elicitation…) at once.
		s.serverReqs.Add(1)
		s.wmu.Lock()
		b := AppendErrorResponse(nil, m.ID, -32601, "method not supported by mcpbench")
		_, werr := s.stdin.Write(b)
		s.wmu.Unlock()
		_ = werr // a closed stdin shows up as EOF on stdout soon
	default:
		s.notifications.Add(1)
	}
	return nil
}

// Send writes one request and arranges for its response to be delivered on
// ch (buffered by the caller). It returns the id used.
func (s *Server) Send(method string, params json.RawMessage, ch chan<- Message) (int64, error) {
	id := s.nextID.Add(1)
	s.mu.Lock()
	if s.readErr != nil {
		err := s.readErr
		s.mu.Unlock()
		return 0, s.describe(err)
	}
	s.pending[id] = ch
	s.mu.Unlock()
	s.wmu.Lock()
	s.wbuf = AppendRequest(s.wbuf[:0], id, method, params)
	_, err := s.stdin.Write(s.wbuf)
	s.wmu.Unlock()
	if err != nil {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
		return 0, s.describe(fmt.Errorf("writing to the server: %w", err))
	}
	return id, nil
}

// Notify writes one notification.
func (s *Server) Notify(method string, params json.RawMessage) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.wbuf = AppendNotification(s.wbuf[:0], method, params)
	if _, err := s.stdin.Write(s.wbuf); err != nil {
		return s.describe(fmt.Errorf("writing to the server: %w", err))
	}
	return nil
}

// Wait waits for a message on ch, the end of the server's stdout, or ctx.
func (s *Server) Wait(ctx context.Context, ch <-chan Message) (Message, error) {
	select {
	case m := <-ch:
		return m, nil
	case <-s.readEnd:
		select { // the answer may have come just before the end
		case m := <-ch:
			return m, nil
		default:
		}
		s.mu.Lock()
		err := s.readErr
		s.mu.Unlock()
		return Message{}, s.describe(fmt.Errorf("reading from the server: %w", err))
	case <-ctx.Done():
		return Message{}, s.describe(ctx.Err())
	}
}

// Call sends one request and waits for its response.
func (s *Server) Call(ctx context.Context, method string, params json.RawMessage) (Message, error) {
	ch := make(chan Message, 1)
	if _, err := s.Send(method, params, ch); err != nil {
		return Message{}, err
	}
	return s.Wait(ctx, ch)
}

// Initialize performs the handshake: initialize, then the initialized
// notification.
func (s *Server) Initialize(ctx context.Context) error {
	m, err := s.Call(ctx, "initialize", InitializeParams)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return s.describe(fmt.Errorf("initialize: %w", m.Error))
	}
	return s.Notify("notifications/initialized", nil)
}

// CloseStdin closes the server's stdin and returns how long the server's
// leader process took to exit, or ok=false if it was still running after
// limit.
func (s *Server) CloseStdin(limit time.Duration) (d time.Duration, ok bool) {
	start := time.Now()
	s.wmu.Lock()
	s.stdin.Close()
	s.wmu.Unlock()
	select {
	case <-s.exited:
		return time.Since(start), true
	case <-time.After(limit):
		return time.Since(start), false
	}
}

// Exited reports whether the leader process has exited.
func (s *Server) Exited() bool {
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

func (s *Server) describe(err error) error {
	msg := err.Error()
	select { // a broken pipe usually means the server is exiting: say how
	case <-s.exited:
	case <-time.After(200 * time.Millisecond):
	}
	if s.Exited() {
		msg += fmt.Sprintf(" (server exited: %v)", s.waitErr)
	}
	if tail := s.StderrTail(600); tail != "" {
		msg += "; its stderr ends with:\n" + tail
	}
	return errors.New(msg)
}
