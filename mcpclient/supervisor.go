package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/internal/ctxtime"
	"github.com/agentapp/agentapp/mcpclient/internal/listing"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the restart policy: a server that stops is restarted on the
// next call, at most defaultMaxRestarts times per defaultRestartWindow.
const (
	defaultMaxRestarts   = 3
	defaultRestartWindow = time.Minute
	// crashWait bounds how long a failed call waits for the bridge to
	// notice that the server's process (or session) has ended, so that the
	// error can name the exit status instead of a bare "connection closed".
	crashWait = time.Second
	// lastWordsWait bounds how long the watcher waits, once a stdio
	// server has stopped, for its stderr to reach EOF, so that the reason
	// it records quotes the server's last lines. Something the server
	// spawned may hold the pipe open; the reason then has the lines so far.
	lastWordsWait = 500 * time.Millisecond
)

// restartPolicy decides how a bridge brings back a server that stopped. The
// zero value means the defaults; tests inject Now and Sleep to run the
// policy without waiting.
type restartPolicy struct {
	// MaxRestarts is how many automatic restarts are allowed within Window
	// (default 3). Once they are used up the server is down: calls fail at
	// once until Bridge.Restart (the chat's /mcp restart) is called.
	MaxRestarts int
	// Window is the sliding window MaxRestarts counts in (default 1 min).
	Window time.Duration
	// Backoff is the wait before the nth restart of the window (n from 1);
	// the default restarts at once the first time, then waits 0.5 s, 1 s,
	// 2 s… (at most 10 s), so a server that dies at start is not respawned
	// in a tight loop.
	Backoff func(n int) time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends (default: a timer).
	Sleep func(ctx context.Context, d time.Duration) error
}

// defaultBackoff is the default restartPolicy.Backoff.
func defaultBackoff(n int) time.Duration {
	if n <= 1 {
		return 0
	}
	d := 500 * time.Millisecond << min(n-2, 5)
	return min(d, 10*time.Second)
}

func (p restartPolicy) withDefaults() restartPolicy {
	if p.MaxRestarts <= 0 {
		p.MaxRestarts = defaultMaxRestarts
	}
	if p.Window <= 0 {
		p.Window = defaultRestartWindow
	}
	if p.Backoff == nil {
		p.Backoff = defaultBackoff
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Sleep == nil {
		p.Sleep = ctxtime.Sleep
	}
	return p
}

// withRestartPolicy sets how a server that stopped is restarted (see
// restartPolicy; the zero value is the default policy).
func withRestartPolicy(p restartPolicy) ConnectOption {
	return func(o *connectOptions) { o.restart = p }
}

// ServerState is where a bridge's server stands.
type ServerState int

const (
	// StateConnected: the session is up.
	StateConnected ServerState = iota + 1
	// StateRestarting: the server stopped and is restarted on the next call
	// (or a restart is in progress).
	StateRestarting
	// StateDown: the server stopped more often than the restart policy
	// allows; calls fail at once until Bridge.Restart.
	StateDown
	// StateClosed: Close was called.
	StateClosed
)

func (s ServerState) String() string {
	switch s {
	case StateConnected:
		return "connected"
	case StateRestarting:
		return "restarting"
	case StateDown:
		return "down"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("ServerState(%d)", int(s))
}

// Status is a snapshot of a bridge for display (the chat's /mcp).
type Status struct {
	State ServerState
	// Tools is how many tools the server offers (after the config's filters).
	Tools int
	// Restarts is how many automatic restarts the current window holds.
	Restarts int
	// Detail says why the server is not connected ("" when it is).
	Detail string
}

// Status reports the bridge's state. A stdio server whose process has
// already exited is reported as stopped, with the reason, even when the
// watcher is still collecting its last stderr lines: Status then waits for
// them (the watcher gives them lastWordsWait at most), because the state
// and its reason are one record and are never shown apart.
func (b *Bridge) Status() Status {
	b.current().settle()
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Status{State: b.state, Tools: len(b.tools.tools), Restarts: len(b.restarts)}
	if st.State != StateConnected {
		st.Detail = b.lastStop
	}
	return st
}

// serverExitError is a call cut short because the server stopped under it:
// its process exited (stdio) or its session ended (HTTP, in-memory).
type serverExitError struct {
	Server string
	// Reason names the exit status and the server's last stderr lines.
	Reason string
	Err    error
}

func (e *serverExitError) Error() string {
	return fmt.Sprintf("MCP server %s stopped while the call was running: %s; it is restarted on the next call", e.Server, e.Reason)
}
func (e *serverExitError) Unwrap() error { return e.Err }

// serverDownError is a call refused at once because the server is down.
type serverDownError struct {
	Server string
	// Restarts and Window are the policy that was exhausted.
	Restarts int
	Window   time.Duration
	// Last is why the server stopped the last time.
	Last string
}

func (e *serverDownError) Error() string {
	return fmt.Sprintf("MCP server %s is down: it stopped again after %d restarts within %s (last: %s); it is not restarted automatically any more; the user can restart it with /mcp restart %s in the chat",
		e.Server, e.Restarts, e.Window, e.Last, e.Server)
}

// restartError is a call that needed a restart which failed.
type restartError struct {
	Server string
	// Last is why the server had stopped.
	Last string
	Err  error
}

func (e *restartError) Error() string {
	return fmt.Sprintf("MCP server %s had stopped (%s) and restarting it failed: %v; the next call tries again", e.Server, e.Last, e.Err)
}
func (e *restartError) Unwrap() error { return e.Err }

// conn is one session with a server: one spawned process (stdio) or one
// HTTP or in-memory session. A restart replaces the bridge's conn.
type conn struct {
	session *mcp.ClientSession
	client  *mcp.Client // its roots are the ones offered on session
	capture *capture
	proc    *supervise.Process // stdio only
	direct  *stdiofast.Conn    // stdio: the direct tools/call path; nil: the SDK's
	release func()             // HTTP: idle connections; in-memory: the server side
	ht      *headerTransport

	closing atomic.Bool // we are ending it: its end is not a crash

	// ended and reason are the one record of c's end: the session ended
	// or, for stdio, the server's process exited, whichever came first.
	// The watcher writes reason and closes ended while holding the bridge's
	// mu, and in the same critical section moves the bridge to
	// StateRestarting with reason as lastStop when c is the live
	// connection, so no one sees a stopped server without its reason or
	// with the reason of an earlier stop.
	ended     chan struct{}
	reason    string
	watchDone chan struct{}
}

// alive reports whether c can take calls: its end has not been recorded.
func (c *conn) alive() bool {
	if c == nil {
		return false
	}
	select {
	case <-c.ended:
		return false
	default:
		return true
	}
}

// running reports whether c's server may still be closed politely: c is
// alive and, for stdio, its process has not exited. What is left of a
// crashed server is killed at once instead.
func (c *conn) running() bool {
	return c.alive() && (c.proc == nil || !c.proc.HasExited())
}

// settle waits for the watcher to record c's end when c's stdio process has
// already exited: the watcher then only collects the last stderr lines, and
// deciding on c before that would see a dead server as alive.
func (c *conn) settle() {
	if c == nil || c.proc == nil || !c.proc.HasExited() {
		return
	}
	t := time.NewTimer(lastWordsWait + time.Second)
	defer t.Stop()
	select {
	case <-c.ended:
	case <-t.C:
	}
}

// start begins watching c; b learns of its end at once, whether or not a
// call is running. A stdio server's end is its session's end or its
// process's exit: something the server spawned may keep the pipes, and so
// the session, open after the server itself is gone.
func (b *Bridge) start(c *conn) {
	c.ended = make(chan struct{})
	c.watchDone = make(chan struct{})
	sessionEnd := make(chan error, 1)
	go func() { sessionEnd <- c.session.Wait() }()
	go func() {
		defer close(c.watchDone)
		var exited <-chan struct{}
		if c.proc != nil {
			exited = c.proc.Exited()
		}
		var err error
		sessionOver := false
		select {
		case err = <-sessionEnd:
			sessionOver = true
		case <-exited:
		}
		crashed := !c.closing.Load()
		reason := "the connection was closed"
		if crashed {
			reason = b.describeEnd(c, err)
		}
		b.mu.Lock()
		c.reason = reason
		close(c.ended)
		current := crashed && b.cur == c && b.state == StateConnected
		if current {
			b.state = StateRestarting
			b.lastStop = reason
		}
		b.mu.Unlock()
		if current {
			b.opts.logger.Warn("mcp: server stopped; it is restarted on the next call", "server", b.name, "reason", reason)
		}
		if !sessionOver {
			// The session ends when the connection is closed (the next call's
			// restart, or Close); watchDone tells closeConn it has.
			<-sessionEnd
		}
	}()
}

// describeEnd says why a session ended on its own: for stdio, the exit
// status and the last stderr lines.
func (b *Bridge) describeEnd(c *conn, err error) string {
	if c.proc == nil {
		if err == nil || isBenignCloseError(err) {
			return "the server closed the connection"
		}
		return "the connection failed: " + safeText(err)
	}
	p := c.proc
	var s string
	if p.WaitExit(crashWait) {
		s = "its process exited (" + p.ExitStatus() + ")"
	} else {
		s = "it closed its stdout"
	}
	// The stderr pipe reaches EOF with the process; its last lines are the
	// server's last words.
	p.WaitStderr(lastWordsWait)
	if tail := p.Stderr().Tail(3); len(tail) > 0 {
		s += "; its last stderr lines: " + strings.Join(tail, " | ")
	} else {
		s += "; nothing on its stderr"
	}
	return s
}

// awaitEnd waits briefly for c's end after a call failed in transport, and
// returns why it ended.
func awaitEnd(c *conn) (string, bool) {
	t := time.NewTimer(crashWait + time.Second)
	defer t.Stop()
	select {
	case <-c.ended:
		return c.reason, true
	case <-t.C:
		return "", false
	}
}

// current returns the live connection, nil while a restart is in progress
// or after Close.
func (b *Bridge) current() *conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}

// ready returns the live connection, restarting the server when it stopped
// and the policy allows.
// readyForCall brings a stopped server back as a call would, within the
// call timeout, and returns the error a call would get: the server is
// down, the restart failed, or the bridge is closed.
func (b *Bridge) readyForCall(ctx context.Context) error {
	ctx, cancel, _ := b.bound(ctx)
	defer cancel()
	_, err := b.ready(ctx)
	return err
}

func (b *Bridge) ready(ctx context.Context) (*conn, error) {
	b.current().settle()
	b.mu.Lock()
	c, st := b.cur, b.state
	b.mu.Unlock()
	if st == StateConnected && c.alive() {
		return c, nil
	}
	return b.recover(ctx, false)
}

// recover replaces the connection. manual (Restart) resets the policy's
// count and closes a live connection politely first.
func (b *Bridge) recover(ctx context.Context, manual bool) (*conn, error) {
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	pol := b.opts.restart
	b.mu.Lock()
	if b.state == StateClosed {
		b.mu.Unlock()
		return nil, errBridgeClosed
	}
	old := b.cur
	if !manual {
		if b.state == StateConnected && old.alive() {
			b.mu.Unlock()
			return old, nil // restarted by another call meanwhile
		}
		if b.state == StateDown {
			err := b.downError()
			b.mu.Unlock()
			return nil, err
		}
	}
	now := pol.Now()
	if manual {
		b.restarts = nil
		b.lastStop = "restart requested"
	}
	b.restarts = slices.DeleteFunc(b.restarts, func(t time.Time) bool { return now.Sub(t) >= pol.Window })
	if len(b.restarts) >= pol.MaxRestarts {
		b.state = StateDown
		err := b.downError()
		b.mu.Unlock()
		b.opts.logger.Error("mcp: server stopped too often; not restarting it any more (use /mcp restart in the chat)",
			"server", b.name, "restarts", len(b.restarts), "window", pol.Window, "last", err.Last)
		return nil, err
	}
	if !manual {
		b.restarts = append(b.restarts, now)
	}
	attempt := len(b.restarts)
	last := b.lastStop
	b.state = StateRestarting
	b.cur = nil
	b.mu.Unlock()

	if old != nil {
		b.closeConn(old, manual && old.running())
	}
	if !manual {
		if d := pol.Backoff(attempt); d > 0 {
			if err := pol.Sleep(ctx, d); err != nil {
				return nil, err
			}
		}
		b.opts.logger.Warn("mcp: restarting server", "server", b.name, "attempt", attempt, "after", last)
	}
	c, tools, err := b.dial(ctx)

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state == StateClosed {
		if c != nil {
			go b.closeConn(c, false) // Close is waiting for us to let go
		}
		return nil, errBridgeClosed
	}
	if err != nil {
		b.lastStop = last + "; restart failed: " + firstLine(err.Error())
		if errors.Is(context.Cause(ctx), errBridgeClosed) {
			return nil, errBridgeClosed
		}
		return nil, &restartError{Server: b.name, Last: last, Err: err}
	}
	b.install(c, tools)
	b.stale.Store(false)
	b.opts.logger.Info("mcp: server restarted", "server", b.name, "tools", len(tools.tools))
	return c, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// downError describes the down state; b.mu is held.
func (b *Bridge) downError() *serverDownError {
	pol := b.opts.restart
	return &serverDownError{Server: b.name, Restarts: pol.MaxRestarts, Window: pol.Window, Last: b.lastStop}
}

// Restart reconnects the server now, whatever its state (the chat's /mcp
// restart): a live connection is closed politely first, and the restart
// count starts afresh, so a server that was down gets its automatic
// restarts back.
func (b *Bridge) Restart(ctx context.Context) error {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return fmt.Errorf("MCP server %s: %w", b.name, err)
	}
	defer done()
	if _, err := b.recover(ctx, true); err != nil {
		if errors.Is(err, errBridgeClosed) {
			return fmt.Errorf("MCP server %s: %w", b.name, err)
		}
		return err
	}
	return nil
}

// setToolsLocked replaces the tool list and bumps its generation; b.mu is
// held.
func (b *Bridge) setToolsLocked(tools toolList) {
	b.tools = tools
	b.gen++
}

// toolsChanged returns a channel that receives a value (coalesced) each
// time the server announces, with notifications/tools/list_changed, that
// its tool list changed. Refresh then reads the new list.
func (b *Bridge) toolsChanged() <-chan struct{} { return b.changed }

func (b *Bridge) onListChanged(c *conn) {
	b.mu.Lock()
	current := b.cur == c
	b.mu.Unlock()
	if !current {
		return
	}
	b.stale.Store(true)
	select {
	case b.changed <- struct{}{}:
	default:
	}
}

// Refresh brings the tool list up to date when the server announced a
// change since the last listing, and returns the list's generation: a
// number that grows whenever Tools may return something new (after a
// refresh or a restart). A failed re-listing keeps the old list and is
// retried at the next Refresh; the error is returned for logging.
func (b *Bridge) Refresh(ctx context.Context) (uint64, error) {
	b.mu.Lock()
	if listing.Expired(b.tools.until) {
		// Past its caching hint (protocol 2026-07-28): listed again.
		b.stale.Store(true)
	}
	b.mu.Unlock()
	if !b.stale.Load() {
		return b.generation(), nil
	}
	select {
	case b.sem <- struct{}{}:
		defer func() { <-b.sem }()
	case <-ctx.Done():
		return b.generation(), ctx.Err()
	}
	b.mu.Lock()
	c := b.cur
	b.mu.Unlock()
	if !b.stale.Load() || !c.running() {
		// Refreshed meanwhile, or the next call restarts the server,
		// which lists the tools anyway.
		return b.generation(), nil
	}
	b.stale.Store(false)
	timeout := b.cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = defaultConnectTimeout
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tools, err := b.listTools(lctx, c)
	if err != nil {
		b.stale.Store(true)
		return b.generation(), fmt.Errorf("re-listing the tools of MCP server %s after it announced a change: %w", b.name, escaped(err))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == c && tools.sum == b.tools.sum {
		b.tools.until = tools.until // the same list: the table stays
	} else if b.cur == c {
		b.setToolsLocked(tools)
	}
	return b.gen, nil
}

func (b *Bridge) generation() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gen
}
