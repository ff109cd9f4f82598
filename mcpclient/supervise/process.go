// Package supervise runs the process of a stdio MCP server: it starts the
// command in its own process group, reads its stdout as JSON-RPC frames
// (FrameFilter) and its stderr into a ring and the user's terminal, and
// stops the whole group, strays included, with bounded grace periods. It
// knows nothing of MCP sessions; mcpclient's bridge decides when to start
// and stop.
package supervise

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"
)

// Grace periods of the close sequence of a stdio server: stdin EOF,
// then DefaultEOFGrace to exit on its own, then SIGTERM to the process group,
// then DefaultTermGrace, then SIGKILL.
const (
	DefaultEOFGrace  = 2 * time.Second
	DefaultTermGrace = 2 * time.Second
	// KillWait bounds the wait for the exit status after SIGKILL, which the
	// kernel delivers unconditionally; it is the "margin" of the close bound.
	KillWait = 2 * time.Second
	// groupPoll is how often the process group is checked for survivors
	// once the direct child has exited.
	groupPoll = 20 * time.Millisecond
)

// serverIDEnv is set in the environment of every stdio server to a value
// unique to that one process (serverID), which whatever the server starts
// inherits: it is how the close sequence finds a helper that left the
// server's process group and process tree (see process.scan).
const serverIDEnv = "AGENTAPP_MCP_SERVER_ID"

// serverSeq numbers the servers this process starts.
var serverSeq atomic.Uint64

// newServerID returns a value for serverIDEnv that no other server of
// this or another process on the machine has: our pid, a counter and
// random bits.
func newServerID() string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%d-%d-%x", os.Getpid(), serverSeq.Add(1), r)
}

// spawned holds the pids of the servers whose exec.Cmd has not yet waited
// for them, so that the orphan reaper (AdoptOrphans) never takes their
// exit status. spawnMu is held across cmd.Start, so that a server that
// exits at once is in the set before the reaper can see it.
var (
	spawnMu sync.Mutex
	spawned = map[int]bool{}
)

// process is a running stdio server: the child, its pipes and the goroutines
// that read them. It owns the whole process group the child leads, so
// anything the child spawns (npx → node, a wrapper script → the real server)
// is signalled and killed with it, and the strays that left the group (see
// scan).
type Process struct {
	server  string
	cmdLine string
	cmd     *exec.Cmd
	pid     int
	pgid    int
	start   uint64       // the child's start time (Linux), to tell it from a reused pid
	logger  *slog.Logger // the bridge's (WithLogger)

	serverID string // its serverIDEnv value
	idMu     sync.Mutex
	idSeen   map[[2]uint64]bool // pid and start time → carries serverID

	stdin     *os.File
	stdinOnce sync.Once
	stdout    *FrameFilter
	stderrR   *os.File
	stderr    StderrRing
	stderrEnd chan struct{}

	exited  chan struct{}
	waitErr error // valid once exited is closed

	stopOnce sync.Once
}

// Options is what Start takes from the bridge's configuration.
type Options struct {
	// Logger receives the records about the process; nil discards them.
	Logger *slog.Logger
	// MaxFrame bounds one stdout line; 0 means MaxFrameSize.
	MaxFrame int
	// StderrEcho receives the server's stderr, escaped and rate-limited;
	// nil shows it nowhere.
	StderrEcho io.Writer
}

// ErrCommandNotFound marks a stdio command that does not exist.
var ErrCommandNotFound = errors.New("command not found")

// Start spawns cfg's command without a shell, in its own process
// group, with cfg.Env merged over our environment.
func Start(cfg *mcpconfig.Server, o Options) (*Process, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	name, args, err := resolveCommand(cfg)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = cfg.Dir
	// The server inherits our environment with cfg.Env merged over it, a
	// deliberate read of the environment (see the package documentation).
	serverID := newServerID()
	cmd.Env = append(mergeEnv(os.Environ(), cfg.Env), serverIDEnv+"="+serverID)
	setProcessGroup(cmd)
	// WaitDelay bounds Wait once the child has exited while something else
	// (a grandchild) still holds a pipe we gave it; our pipes are plain
	// *os.File so Wait has nothing to copy, but a future switch to
	// io.Writer-backed pipes must not be able to hang Close.
	cmd.WaitDelay = time.Second

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating stdin pipe: %w", err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW)
		return nil, fmt.Errorf("creating stdout pipe: %w", err)
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeAll(stdinR, stdinW, stdoutR, stdoutW)
		return nil, fmt.Errorf("creating stderr pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	spawnMu.Lock()
	err = cmd.Start()
	if err == nil {
		spawned[cmd.Process.Pid] = true
	}
	spawnMu.Unlock()
	// The child has its copies; ours of its ends must go so that EOF is seen
	// when the child (and everything it spawned) is gone.
	closeAll(stdinR, stdoutW, stderrW)
	if err != nil {
		closeAll(stdinW, stdoutR, stderrR)
		return nil, startError(cfg, err)
	}
	p := &Process{
		server:    cfg.Name,
		cmdLine:   cfg.CommandLine(),
		cmd:       cmd,
		pid:       cmd.Process.Pid,
		pgid:      cmd.Process.Pid, // Setpgid with Pgid 0: the group id is the child's pid
		start:     startTime(cmd.Process.Pid),
		logger:    o.Logger,
		serverID:  serverID,
		stdin:     stdinW,
		stderrR:   stderrR,
		stderrEnd: make(chan struct{}),
		exited:    make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		spawnMu.Lock()
		delete(spawned, p.pid)
		spawnMu.Unlock()
		close(p.exited)
	}()
	go func() {
		defer close(p.stderrEnd)
		pumpStderr(cfg.Name, stderrR, &p.stderr, o.StderrEcho, o.Logger)
	}()
	p.stdout = NewFrameFilter(cfg.Name, stdoutR, o.MaxFrame, o.Logger)
	return p, nil
}

func startError(cfg *mcpconfig.Server, err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s (is it installed and on PATH?)", ErrCommandNotFound, cfg.Command)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("command %s cannot be executed (permission denied); check that it is an executable file", cfg.Command)
	}
	return fmt.Errorf("starting %s: %w", cfg.CommandLine(), err)
}

// mergeEnv returns base with overrides applied on top, in a stable order.
// exec.Cmd keeps the last value of a duplicated key, so appending is enough.
func mergeEnv(base []string, overrides map[string]string) []string {
	env := slices.Clone(base)
	for _, k := range slices.Sorted(maps.Keys(overrides)) {
		env = append(env, k+"="+overrides[k])
	}
	return env
}

func closeAll(fs ...io.Closer) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// stdinCloser is the write end of the child's stdin as the transport sees
// it; closing it (from the session or from stop) is the EOF step of the
// close sequence, done once.
type stdinCloser struct{ p *Process }

func (w stdinCloser) Write(b []byte) (int, error) { return w.p.stdin.Write(b) }
func (w stdinCloser) Close() error                { w.p.closeStdin(); return nil }

// Stdin is the write end of the child's stdin; closing it is the EOF step
// of the close sequence.
func (p *Process) Stdin() io.WriteCloser { return stdinCloser{p} }

// Stdout is the child's stdout, read as JSON-RPC frames.
func (p *Process) Stdout() *FrameFilter { return p.stdout }

// Stderr is the ring of the child's last stderr lines.
func (p *Process) Stderr() *StderrRing { return &p.stderr }

// Exited is closed once the direct child has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// CmdLine is the command line the process was started with, for messages.
func (p *Process) CmdLine() string { return p.cmdLine }

// Pid is the direct child's process id.
func (p *Process) Pid() int { return p.pid }

// Pgid is the id of the process group the child leads.
func (p *Process) Pgid() int { return p.pgid }

func (p *Process) closeStdin() {
	p.stdinOnce.Do(func() { _ = p.stdin.Close() })
}

// hasExited reports whether the direct child has exited.
func (p *Process) HasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the direct child to exit.
func (p *Process) WaitExit(d time.Duration) bool {
	if p.HasExited() {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// waitGone waits until deadline for the child to exit and every other
// member of its process group, and every stray, to be gone.
func (p *Process) waitGone(deadline time.Time) bool {
	if !p.WaitExit(time.Until(deadline)) {
		return false
	}
	tick := time.NewTicker(groupPoll)
	defer tick.Stop()
	for p.treeAlive() {
		if !time.Now().Before(deadline) {
			return false
		}
		<-tick.C
	}
	return true
}

// stop runs the close sequence: stdin EOF → eofGrace → SIGTERM to the group
// and the strays → termGrace → SIGKILL to them. It returns once the child
// has been reaped (or KillWait after SIGKILL), so it never blocks much
// longer than eofGrace + termGrace. Survivors are handled even when the
// direct child exits politely: a wrapper script that exits on EOF must not
// leave its server behind, nor a server the daemon it started.
func (p *Process) Stop(eofGrace, termGrace time.Duration) {
	p.stopOnce.Do(func() {
		p.closeStdin()
		if p.waitGone(time.Now().Add(eofGrace)) {
			return
		}
		p.logf("did not exit %v after stdin was closed; sending SIGTERM", eofGrace)
		p.terminate()
		if p.waitGone(time.Now().Add(termGrace)) {
			return
		}
		p.logf("did not exit %v after SIGTERM; killing its process group", termGrace)
		p.kill()
		p.waitGone(time.Now().Add(KillWait))
	})
}

// abort kills the group at once; a failed connect owes nobody a grace period.
func (p *Process) Abort() {
	p.stopOnce.Do(func() {
		p.closeStdin()
		p.kill()
		// SIGKILL is delivered asynchronously: wait until every member of
		// the group is gone, not only the direct child.
		p.waitGone(time.Now().Add(KillWait))
	})
}

// release closes our ends of stdout and stderr and waits for the goroutines
// reading them. Call it after stop or abort. It waits briefly for stderr to
// drain so that error messages include the server's last words.
func (p *Process) Release() {
	_ = p.stdout.Close()
	t := time.NewTimer(500 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stderrEnd:
	case <-t.C:
	}
	_ = p.stderrR.Close()
	<-p.stderrEnd
}

// exitStatus describes how the child ended, or "" while it runs.
func (p *Process) ExitStatus() string {
	if !p.HasExited() {
		return ""
	}
	if p.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		return ee.ProcessState.String()
	}
	return p.waitErr.Error()
}

func (p *Process) logf(format string, args ...any) {
	p.logger.Warn("mcp: "+fmt.Sprintf(format, args...), "server", p.server, "command", p.cmdLine)
}

// waitStderr waits up to d for the server's stderr to reach EOF, so that
// its last lines are in the ring.
func (p *Process) WaitStderr(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.stderrEnd:
	case <-t.C:
	}
}
