package agentmcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioProtocolVersion is the protocol version offered to stdio and
// in-memory servers. Left to itself, the v1.8.0 SDK first probes with the
// draft 2026-07-28 `server/discover` request and falls back to initialize
// only when the server answers with an error; that probe has no timeout of
// its own, and a stdio server that silently ignores unknown methods (many
// do) would hang the connect until its deadline. Pinning the version through
// mcp.ClientSessionOptions.ProtocolVersion makes the SDK send initialize
// straight away. HTTP servers always answer (a 4xx at worst), so they keep
// the SDK's negotiation.
const stdioProtocolVersion = "2025-11-25"

// clientName is how we introduce ourselves in initialize.
var clientImpl = &mcp.Implementation{Name: "agentapp", Version: "0.1.0"}

// ConnectOption tunes Connect; the defaults suit the chat.
type ConnectOption func(*connectOptions)

type connectOptions struct {
	eofGrace, termGrace time.Duration
	stderrEcho          io.Writer
	logger              *slog.Logger
	maxFrame            int
}

// WithGracePeriods sets the close sequence's waits after stdin EOF and after
// SIGTERM (defaults DefaultEOFGrace and DefaultTermGrace). Tests shorten them.
func WithGracePeriods(afterEOF, afterTerm time.Duration) ConnectOption {
	return func(o *connectOptions) { o.eofGrace, o.termGrace = afterEOF, afterTerm }
}

// WithStderrEcho copies every stderr line of a stdio server to w, prefixed
// with "[server] " (the verbose / --trace mode). Without it the lines are
// only kept for StderrTail and error messages, and logged at debug level.
func WithStderrEcho(w io.Writer) ConnectOption {
	return func(o *connectOptions) { o.stderrEcho = w }
}

// WithLogger sets the logger for skipped stdout lines and close-sequence
// escalations; the default is slog.Default().
func WithLogger(l *slog.Logger) ConnectOption {
	return func(o *connectOptions) { o.logger = l }
}

func withMaxFrame(n int) ConnectOption { return func(o *connectOptions) { o.maxFrame = n } }

func buildOptions(opts []ConnectOption) *connectOptions {
	o := &connectOptions{eofGrace: DefaultEOFGrace, termGrace: DefaultTermGrace}
	for _, f := range opts {
		f(o)
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	return o
}

// Bridge is one connected MCP server with the same face whatever the
// transport (stdio, streamable HTTP, in-memory): a name, the server's tools
// adapted as engine tools, and Close.
type Bridge struct {
	name    string
	cfg     ServerConfig
	opts    *connectOptions
	session *mcp.ClientSession
	capture *capture
	proc    *process // stdio only
	onClose func()   // in-memory: ends the server side
	tools   []*agent.Tool

	calls     callSet
	closeOnce sync.Once
	closeErr  error
}

// Name returns the server's name: the tools' Origin.
func (b *Bridge) Name() string { return b.name }

// Tools returns the adapted tools, after ToolPrefix, AllowedTools and
// ExcludedTools were applied, in the server's order.
func (b *Bridge) Tools() []*agent.Tool { return slices.Clone(b.tools) }

// Session returns the underlying MCP session, for requests the bridge does
// not wrap.
func (b *Bridge) Session() *mcp.ClientSession { return b.session }

// StderrTail returns the last lines a stdio server wrote on stderr (nil for
// other transports).
func (b *Bridge) StderrTail() []string {
	if b.proc == nil {
		return nil
	}
	return b.proc.stderr.tail(0)
}

// Connect connects to the server cfg describes (stdio when cfg.Command is
// set, streamable HTTP when cfg.URL is), initializes the session, lists all
// its tools and adapts them. ConnectTimeout (default 30 s) bounds all of it.
// On failure nothing is left running, and the error names the command or
// URL, the cause and, for stdio, the server's last stderr lines.
func Connect(ctx context.Context, cfg ServerConfig, opts ...ConnectOption) (_ *Bridge, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		if cfg.IsHTTP() {
			cfg.Name = cfg.URL
		} else {
			cfg.Name = filepath.Base(cfg.Command)
		}
	}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	b := &Bridge{name: cfg.Name, cfg: cfg, opts: buildOptions(opts), capture: newCapture()}
	if cfg.IsHTTP() {
		err = b.connectHTTP(ctx, timeout)
	} else {
		err = b.connectStdio(ctx, timeout)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (b *Bridge) connectStdio(ctx context.Context, timeout time.Duration) (err error) {
	p, err := startProcess(&b.cfg, b.opts)
	if err != nil {
		return fmt.Errorf("MCP server %s: %w", b.name, err)
	}
	b.proc = p
	phase := "initialize"
	defer func() {
		if err != nil {
			err = b.failStdio(ctx, phase, timeout, err)
		}
	}()
	t := &mcp.IOTransport{
		Reader: p.stdout,
		Writer: stdinCloser{p},
		// The frame filter enforces the limit line by line; the SDK's own
		// counter also counts read-ahead bytes of the next frame.
		MaxLineLength: -1,
	}
	if err := b.open(ctx, t, stdioProtocolVersion); err != nil {
		return err
	}
	phase = "tools/list"
	return b.listTools(ctx)
}

// failStdio kills what was spawned and builds the connect error.
func (b *Bridge) failStdio(ctx context.Context, phase string, timeout time.Duration, cause error) error {
	b.calls.cancelAll()
	p := b.proc
	// A server that died on its own usually closed stdout first; give the
	// exit status a moment to arrive so the message can report it.
	exitedByItself := p.hasExited() || (ctx.Err() == nil && p.waitExit(300*time.Millisecond))
	p.abort()
	if b.session != nil {
		_ = b.session.Close()
	}
	p.release()
	var msg strings.Builder
	fmt.Fprintf(&msg, "connecting to MCP server %s (command: %s) failed during %s: ", b.name, p.cmdLine, phase)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&msg, "no answer within %s (the connect timeout); is it an MCP server speaking stdio?", timeout)
	case exitedByItself:
		fmt.Fprintf(&msg, "the server exited (%s): %v", p.exitStatus(), cause)
	default:
		msg.WriteString(cause.Error())
	}
	if tail := p.stderr.tail(10); len(tail) > 0 {
		msg.WriteString("\nlast lines on its stderr:\n  " + strings.Join(tail, "\n  "))
	} else {
		msg.WriteString(" (nothing on its stderr)")
	}
	return &ConnectError{Server: b.name, Err: cause, msg: msg.String()}
}

// ConnectError is a failed Connect; its message is meant for the user.
type ConnectError struct {
	Server string
	Err    error
	msg    string
}

func (e *ConnectError) Error() string { return e.msg }
func (e *ConnectError) Unwrap() error { return e.Err }

func (b *Bridge) connectHTTP(ctx context.Context, timeout time.Duration) error {
	hc, ht := newHTTPClient(&b.cfg)
	b.onClose = hc.CloseIdleConnections
	t := &mcp.StreamableClientTransport{
		Endpoint:   b.cfg.URL,
		HTTPClient: hc,
		// The standalone GET stream is started by a session callback that
		// the SDK only makes on its own connection types; ours wraps the
		// connection, so the stream would never open. Say so explicitly.
		DisableStandaloneSSE: true,
	}
	fail := func(phase string, err error) error {
		b.calls.cancelAll()
		if b.session != nil {
			_ = b.session.Close()
		}
		hc.CloseIdleConnections()
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s (the connect timeout): %w", timeout, err)
		}
		err = ht.explain(err)
		return &ConnectError{Server: b.name, Err: err,
			msg: fmt.Sprintf("connecting to MCP server %s (%s) failed during %s: %v", b.name, b.cfg.URL, phase, err)}
	}
	if err := b.open(ctx, t, ""); err != nil {
		return fail("initialize", err)
	}
	if v := b.session.InitializeResult().ProtocolVersion; v != "" {
		ht.version.Store(&v)
	}
	if err := b.listTools(ctx); err != nil {
		return fail("tools/list", err)
	}
	return nil
}

// ConnectInMemory connects to srv running in this process, over an
// in-memory transport. It is how tests (and embedders) plug our own server
// into the engine with the full protocol in between.
func ConnectInMemory(ctx context.Context, name string, srv *mcp.Server, opts ...ConnectOption) (*Bridge, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("starting in-memory MCP server %s: %w", name, err)
	}
	b := &Bridge{name: name, cfg: ServerConfig{Name: name}, opts: buildOptions(opts), capture: newCapture()}
	b.onClose = func() {
		_ = ss.Close()
		_ = ss.Wait()
	}
	if err := b.open(ctx, ct, stdioProtocolVersion); err != nil {
		b.onClose()
		return nil, fmt.Errorf("connecting to in-memory MCP server %s: %w", name, err)
	}
	if err := b.listTools(ctx); err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("listing tools of in-memory MCP server %s: %w", name, err)
	}
	return b, nil
}

// open runs initialize through the capturing connection wrapper.
func (b *Bridge) open(ctx context.Context, t mcp.Transport, version string) error {
	client := mcp.NewClient(clientImpl, &mcp.ClientOptions{
		Logger: b.opts.logger,
		// No roots: we expose no filesystem to servers.
		Capabilities: &mcp.ClientCapabilities{},
	})
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	s, err := client.Connect(ctx, &captureTransport{inner: t, cap: b.capture}, so)
	if err != nil {
		return err
	}
	b.session = s
	return nil
}

// listTools reads every page of tools/list and adapts the tools the config
// lets through.
func (b *Bridge) listTools(ctx context.Context) error {
	var tools []*agent.Tool
	for t, err := range b.session.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		if !b.keep(t.Name) {
			continue
		}
		in, out := b.capture.schemas(t.Name)
		tools = append(tools, adaptTool(b, b.name, t, b.cfg.ToolPrefix+t.Name, in, out, b.cfg.CallTimeout))
	}
	b.tools = tools
	return nil
}

func (b *Bridge) keep(name string) bool {
	if len(b.cfg.AllowedTools) > 0 && !slices.Contains(b.cfg.AllowedTools, name) {
		return false
	}
	return !slices.Contains(b.cfg.ExcludedTools, name)
}

// CallTool implements ToolCaller: it sends tools/call and tracks the call so
// that Close can cancel it (the SDK's session close waits for calls in
// flight, so an unanswered call would otherwise hang Close).
func (b *Bridge) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := b.session.CallTool(ctx, p)
	if err != nil && errors.Is(context.Cause(ctx), errBridgeClosed) {
		return nil, fmt.Errorf("%w: %v", errBridgeClosed, err)
	}
	if err != nil && b.proc != nil && b.proc.hasExited() {
		detail := b.proc.exitStatus()
		if tail := b.proc.stderr.tail(3); len(tail) > 0 {
			detail += "; its last stderr lines: " + strings.Join(tail, " | ")
		}
		err = fmt.Errorf("%w (the server process has exited: %s)", err, detail)
	}
	return res, err
}

// ListResources lists every resource the server offers (all pages).
func (b *Bridge) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []*mcp.Resource
	for r, err := range b.session.Resources(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing resources of MCP server %s: %w", b.name, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadResource reads one resource by URI.
func (b *Bridge) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := b.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("reading %s from MCP server %s: %w", uri, b.name, err)
	}
	return res, nil
}

// Close ends the connection: calls in flight are cancelled first, then the
// session is closed; a stdio server gets stdin EOF, then SIGTERM, then
// SIGKILL, each to its whole process group, after the grace periods. Close
// is idempotent and never blocks much longer than the two grace periods.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() {
		b.calls.cancelAll()
		sessDone := make(chan error, 1)
		go func() {
			if b.session == nil {
				sessDone <- nil
				return
			}
			// Closes the transport, hence stdin: the EOF step.
			sessDone <- b.session.Close()
		}()
		if b.proc != nil {
			b.proc.stop(b.opts.eofGrace, b.opts.termGrace)
			b.proc.release()
		}
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case err := <-sessDone:
			if err != nil && !isBenignCloseError(err) {
				b.closeErr = fmt.Errorf("closing MCP session with %s: %w", b.name, err)
			}
		case <-t.C:
			b.closeErr = fmt.Errorf("closing MCP session with %s: the session did not shut down", b.name)
		}
		if b.onClose != nil {
			b.onClose()
		}
	})
	return b.closeErr
}

func isBenignCloseError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) ||
		strings.Contains(err.Error(), "closed") || strings.Contains(err.Error(), "broken pipe")
}

// callSet tracks the cancel functions of requests in flight.
type callSet struct {
	mu     sync.Mutex
	closed bool
	next   int
	cancel map[int]context.CancelCauseFunc
}

func (s *callSet) track(ctx context.Context) (context.Context, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, errBridgeClosed
	}
	if s.cancel == nil {
		s.cancel = map[int]context.CancelCauseFunc{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	id := s.next
	s.next++
	s.cancel[id] = cancel
	return ctx, func() {
		s.mu.Lock()
		delete(s.cancel, id)
		s.mu.Unlock()
		cancel(nil)
	}, nil
}

func (s *callSet) cancelAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, c := range s.cancel {
		c(errBridgeClosed)
	}
	clear(s.cancel)
}
