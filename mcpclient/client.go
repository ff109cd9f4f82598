package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"github.com/agentapp/agentapp/mcpclient/internal/listing"
	"github.com/agentapp/agentapp/mcpclient/internal/nextgen"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/oauth"
	mcpskills "github.com/agentapp/agentapp/mcpclient/skills"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// Default timeouts for MCP connections, used where a server's
// mcpconfig.Server leaves ConnectTimeout or CallTimeout at 0.
const (
	// defaultConnectTimeout bounds spawn (or dial) + initialize + tools/list.
	defaultConnectTimeout = 30 * time.Second
	// defaultCallTimeout bounds one request after connecting: a
	// tools/call, a listing of resources, templates or prompts, a
	// resources/read.
	defaultCallTimeout = 60 * time.Second
)

// stdioProtocolVersion is the protocol version offered to in-memory
// servers, and to stdio servers whose command did not take 2026-07-28
// (discover.go): mcp.ClientSessionOptions.ProtocolVersion at this version
// makes the SDK send initialize straight away, without the server/discover
// probe.
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
	lists               listLimits
	restart             restartPolicy
	httpBase            http.RoundTripper // tests: the transport under the HTTP client
	oauth               *oauth.Options    // nil: no OAuth logins

	// The client half (clientside.go).
	sampler     Sampler
	samplingMax int64
	elicitor    Elicitor
	roots       []string // nil: no roots unless the config names some
	progress    func(Progress)
	logLevel    mcp.LoggingLevel
	serverLog   func(ServerLog)

	// sdkToolCalls sends every tools/call through the SDK's session, also
	// on stdio (withSDKToolCalls).
	sdkToolCalls bool

	// apps advertises the MCP Apps extension (WithApps, apps.go).
	apps bool
}

// WithGracePeriods sets the close sequence's waits after stdin EOF and after
// SIGTERM (defaults supervise.DefaultEOFGrace and supervise.DefaultTermGrace). Tests shorten them.
func WithGracePeriods(afterEOF, afterTerm time.Duration) ConnectOption {
	return func(o *connectOptions) { o.eofGrace, o.termGrace = afterEOF, afterTerm }
}

// WithStderrEcho copies every stderr line of a stdio server to w, prefixed
// with "[server] " (the verbose / --trace mode). Without it the lines are
// only kept for StderrTail and error messages, and logged at debug level.
func WithStderrEcho(w io.Writer) ConnectOption {
	return func(o *connectOptions) { o.stderrEcho = w }
}

// WithLogger sets the logger for what the bridge has to tell about its
// server: skipped stdout lines, close-sequence escalations, crashes and
// restarts, and the SDK client's own records. Without it, or with nil, they
// are discarded: a library must not write to the program's default logger
// behind its back.
func WithLogger(l *slog.Logger) ConnectOption {
	return func(o *connectOptions) { o.logger = l }
}

func withMaxFrame(n int) ConnectOption { return func(o *connectOptions) { o.maxFrame = n } }

func buildOptions(opts []ConnectOption) *connectOptions {
	o := &connectOptions{eofGrace: supervise.DefaultEOFGrace, termGrace: supervise.DefaultTermGrace}
	for _, f := range opts {
		f(o)
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	o.restart = o.restart.withDefaults()
	o.lists = o.lists.WithDefaults()
	if o.maxFrame <= 0 {
		o.maxFrame = supervise.MaxFrameSize
	}
	return o
}

// Bridge is one connected MCP server with the same face whatever the
// transport (stdio, streamable HTTP, in-memory): a name, the server's tools
// adapted as engine tools, and Close.
//
// A bridge outlives its server's process: when the process exits (or an
// HTTP or in-memory session ends), the call in flight fails with a
// *serverExitError and the next call restarts the server (initialize and
// tools/list again) under the restartPolicy; when the policy's restarts are
// used up, calls fail at once with a *serverDownError until Restart. A
// server's notifications/tools/list_changed marks the list stale; Refresh
// reads it again.
type Bridge struct {
	name string
	cfg  mcpconfig.Server
	opts *connectOptions
	// dial starts a new session (spawning the process for stdio) and lists
	// the tools; Connect and every restart use it.
	dial func(ctx context.Context) (*conn, toolList, error)

	mu       sync.Mutex
	cur      *conn // nil while a restart is in progress or after Close
	state    ServerState
	tools    toolList
	gen      uint64             // generation of tools
	restarts []time.Time        // automatic restarts within the policy's window
	lastStop string             // why the server last stopped
	proc     *supervise.Process // the latest process, for StderrTail

	sem     chan struct{} // one restart or re-listing at a time
	stale   atomic.Bool   // the server announced a tool list change
	legacy  atomic.Bool   // a bare URL turned out to be a legacy SSE server
	changed chan struct{}

	side clientSide

	calls     callSet
	closeOnce sync.Once
	closeErr  error
}

func newBridge(cfg mcpconfig.Server, opts *connectOptions) *Bridge {
	return &Bridge{
		name:    cfg.Name,
		cfg:     cfg,
		opts:    opts,
		state:   StateConnected,
		sem:     make(chan struct{}, 1),
		changed: make(chan struct{}, 1),
	}
}

// Name returns the server's name: the tools' Origin.
func (b *Bridge) Name() string { return b.name }

// Tools returns the adapted tools, after ToolPrefix, AllowedTools and
// ExcludedTools were applied, in the server's order. After a restart or a
// Refresh it returns the new list.
func (b *Bridge) Tools() []*agent.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.tools.tools)
}

// RemoteName returns the server's own name for the tool the bridge offers
// as name (they differ when mcpconfig.ExposedName had to map it, and by ToolPrefix),
// and false when the bridge offers no such tool.
func (b *Bridge) RemoteName(name string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.tools.remote[name]
	return r, ok
}

// callTimeout returns the bound of one request to the server:
// mcpconfig.Server.CallTimeout, or defaultCallTimeout when that is 0.
func (b *Bridge) callTimeout() time.Duration {
	if b.cfg.CallTimeout > 0 {
		return b.cfg.CallTimeout
	}
	return defaultCallTimeout
}

// bound returns ctx limited to callTimeout when it has no deadline of its
// own, so that no request the bridge sends can wait for ever, and the
// bound it set (0 when ctx had its own deadline).
func (b *Bridge) bound(ctx context.Context) (context.Context, context.CancelFunc, time.Duration) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}, 0
	}
	d := b.callTimeout()
	ctx, cancel := context.WithTimeout(ctx, d)
	return ctx, cancel, d
}

// session returns the current MCP session, for requests the bridge does
// not wrap; it is nil while the server is being restarted.
func (b *Bridge) session() *mcp.ClientSession {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == nil {
		return nil
	}
	return b.cur.session
}

// stderrTail returns the last lines the latest stdio server process wrote
// on stderr, even after it exited (nil for other transports).
func (b *Bridge) stderrTail() []string {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Stderr().Tail(0)
}

// stderrErrors returns the decisive lines the latest stdio server process
// wrote on stderr: the first line that looks like an error and the latest
// such line when it is another (nil when none did, and for other
// transports). They are what a failure should show first; the tail may
// hold only the end of a stack trace.
func (b *Bridge) stderrErrors() []string {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.Stderr().ErrorLines()
}

// Connect connects to the server cfg describes (stdio when cfg.Command is
// set, streamable HTTP when cfg.URL is), initializes the session, lists all
// its tools and adapts them. ConnectTimeout (default 30 s) bounds all of it.
// On failure nothing is left running, and the error names the command or
// URL, the cause and, for stdio, the server's last stderr lines.
func Connect(ctx context.Context, cfg mcpconfig.Server, opts ...ConnectOption) (*Bridge, error) {
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
	b := newBridge(cfg, buildOptions(opts))
	if err := b.initRoots(); err != nil {
		return nil, err
	}
	if cfg.IsHTTP() {
		b.dial = b.dialHTTP
	} else {
		b.dial = b.dialStdio
	}
	if err := b.first(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// first makes the first connection.
func (b *Bridge) first(ctx context.Context) error {
	c, tools, err := b.dial(ctx)
	if err != nil {
		return err
	}
	// The session's watcher already runs and reads these fields.
	b.mu.Lock()
	defer b.mu.Unlock()
	b.install(c, tools)
	return nil
}

// install makes c the live connection; b.mu is held. A server that
// stopped between listing its tools and now (its watcher found it was not
// the live connection yet) is installed as stopped, with its reason.
func (b *Bridge) install(c *conn, tools toolList) {
	b.cur = c
	if c.proc != nil {
		b.proc = c.proc
	}
	b.state, b.lastStop = StateConnected, ""
	if !c.alive() {
		b.state, b.lastStop = StateRestarting, c.reason
	}
	b.setToolsLocked(tools)
}

func (b *Bridge) connectTimeout() time.Duration {
	if b.cfg.ConnectTimeout > 0 {
		return b.cfg.ConnectTimeout
	}
	return defaultConnectTimeout
}

func (b *Bridge) dialStdio(ctx context.Context) (_ *conn, _ toolList, err error) {
	timeout := b.connectTimeout()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := supervise.Start(&b.cfg, supervise.Options{Logger: b.opts.logger, MaxFrame: b.opts.maxFrame, StderrEcho: b.opts.stderrEcho})
	if err != nil {
		return nil, toolList{}, fmt.Errorf("MCP server %s: %w", b.name, err)
	}
	c := &conn{proc: p, capture: newCapture()}
	phase := "initialize"
	defer func() {
		if err != nil {
			err = b.failStdio(ctx, c, phase, timeout, err)
		}
	}()
	t := stdiofast.NewTransport(p.Stdout(), p.Stdin())
	if err := b.open(ctx, c, &captureTransport{inner: t, cap: c.capture}, stdioVersion(&b.cfg)); err != nil {
		return nil, toolList{}, err
	}
	rememberStdioVersion(&b.cfg, c.session)
	if !b.opts.sdkToolCalls {
		c.direct = t.Conn()
	}
	phase = "tools/list"
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return nil, toolList{}, err
	}
	b.listCatalog(ctx, c)
	b.start(c)
	return c, tools, nil
}

// failStdio kills what was spawned and builds the connect error.
func (b *Bridge) failStdio(ctx context.Context, c *conn, phase string, timeout time.Duration, cause error) error {
	p := c.proc
	// A server that died on its own usually closed stdout first; give the
	// exit status a moment to arrive so the message can report it.
	exitedByItself := p.HasExited() || (ctx.Err() == nil && p.WaitExit(300*time.Millisecond))
	p.Abort()
	if c.session != nil {
		_ = c.session.Close()
	}
	p.Release()
	var msg strings.Builder
	fmt.Fprintf(&msg, "connecting to MCP server %s (command: %s) failed during %s: ", b.name, p.CmdLine(), phase)
	switch {
	case errors.Is(context.Cause(ctx), errBridgeClosed):
		msg.WriteString("the bridge was closed")
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		fmt.Fprintf(&msg, "no answer within %s (the connect timeout); is it an MCP server speaking stdio?", timeout)
	case exitedByItself:
		fmt.Fprintf(&msg, "the server exited (%s): %s", p.ExitStatus(), safeText(cause))
	default:
		msg.WriteString(safeText(cause))
	}
	decisive, tail := p.Stderr().ErrorLines(), p.Stderr().Tail(stderrTailShown)
	for _, l := range decisive {
		msg.WriteString("\nits stderr says: " + l)
	}
	if len(tail) > 0 {
		msg.WriteString("\nlast lines on its stderr:\n  " + strings.Join(tail, "\n  "))
	} else {
		msg.WriteString(" (nothing on its stderr)")
	}
	return &ConnectError{Server: b.name, Err: cause, msg: msg.String(), StderrErrors: decisive, StderrTail: tail}
}

// stderrTailShown is how many of a failed server's last stderr lines its
// connect error holds.
const stderrTailShown = 10

// ConnectError is a failed Connect; its message is meant for the user.
type ConnectError struct {
	Server string
	Err    error
	// StderrErrors are the decisive lines of a stdio server's stderr: the
	// first that looks like an error ("Error [ERR_MODULE_NOT_FOUND]:
	// Cannot find package 'x'", "FATAL: DATABASE_URL is not set") and the
	// latest such line when it is another; nil when none did. Each is
	// escaped for a terminal and at most 1000 bytes.
	StderrErrors []string
	// StderrTail is the server's last stderr lines (at most 10), escaped.
	StderrTail []string
	msg        string
	legacy     bool // the server refused streamable HTTP as a legacy SSE server does
	// tokens is the OAuth login a refused streamable attempt obtained or
	// loaded, for the SSE attempt after it; nil without one.
	tokens oauth2.TokenSource
}

func (e *ConnectError) Error() string { return e.msg }

// headline is the first line of the message: which server failed, when and
// how, without the stderr lines.
func (e *ConnectError) headline() string {
	h, _, _ := strings.Cut(e.msg, "\n")
	return h
}

// FailureReason returns the decisive stderr lines of the server a failed
// Connect (err, or an error wrapping it) was about, for a one-line summary
// next to the failure ("the server exited … — FATAL: DATABASE_URL is not
// set"): ConnectError.StderrErrors, else the last line of its stderr, else
// nil.
func FailureReason(err error) []string {
	var ce *ConnectError
	if !errors.As(err, &ce) {
		return nil
	}
	if len(ce.StderrErrors) > 0 {
		return ce.StderrErrors
	}
	for i := len(ce.StderrTail) - 1; i >= 0; i-- {
		if strings.TrimSpace(ce.StderrTail[i]) != "" {
			return []string{ce.StderrTail[i]}
		}
	}
	return nil
}
func (e *ConnectError) Unwrap() error { return e.Err }

// dialHTTP connects over HTTP with the transport the config names; for a
// bare URL it tries streamable HTTP, then the legacy SSE transport when
// the server answered like a legacy one, and keeps to SSE afterwards.
func (b *Bridge) dialHTTP(ctx context.Context) (*conn, toolList, error) {
	switch {
	case b.cfg.Transport == mcpconfig.TransportSSE || b.legacy.Load():
		return b.dialSSE(ctx, nil)
	case b.cfg.Transport == mcpconfig.TransportHTTP:
		return b.dialStreamable(ctx)
	}
	c, tools, err := b.dialStreamable(ctx)
	var ce *ConnectError
	if err == nil || !errors.As(err, &ce) || !ce.legacy || ctx.Err() != nil {
		return c, tools, err
	}
	b.opts.logger.Debug("the server refused streamable HTTP; trying the legacy SSE transport", "server", b.name)
	c, tools, serr := b.dialSSE(ctx, ce.tokens)
	if serr != nil {
		var sce *ConnectError
		if errors.As(serr, &sce) {
			sce.msg += fmt.Sprintf(" (streamable HTTP was tried first: %s; set \"type\" to \"http\" or \"sse\" to try only one)", safeText(ce.Err))
		}
		return nil, toolList{}, serr
	}
	b.legacy.Store(true)
	return c, tools, nil
}

// withSDKToolCalls turns the direct tools/call path off: every tools/call
// then goes through the SDK's session, also on stdio. It is the switch to
// reach for when the direct path is suspected of answering differently
// (the results are the same either way, only costlier without it); the
// direct path's tests hold it to this plain path.
func withSDKToolCalls() ConnectOption {
	return func(o *connectOptions) { o.sdkToolCalls = true }
}

// WithOAuth turns on OAuth logins for HTTP servers (see oauth.Options).
// Without it, a 401 fails the connect with advice about tokens.
func WithOAuth(o *oauth.Options) ConnectOption {
	return func(co *connectOptions) {
		if o == nil {
			o = &oauth.Options{}
		}
		co.oauth = o
	}
}

// loginFlow returns the OAuth login of one connection attempt, or nil when
// the server is not to log in: OAuth is off, or a static token or an
// Authorization header says how to authenticate. The flow starts from
// tokens when given (what an earlier attempt of the same connect holds),
// else from the stored login.
func (b *Bridge) loginFlow(ht *headerTransport, clock *oauth.Clock, tokens oauth2.TokenSource) (*oauth.Flow, error) {
	if b.opts.oauth == nil || b.cfg.Token != "" || b.cfg.Headers["Authorization"] != "" {
		return nil, nil
	}
	flow, err := oauth.NewFlow(&b.cfg, b.opts.oauth, b.opts.logger, oauth.NewAuthClient(ht.base), clock, tokens)
	if err != nil {
		return nil, err
	}
	ht.oauth = true
	return flow, nil
}

// newHTTPConn is the connection of an HTTP transport: releasing it ends the
// login flow, if there is one, and closes the client's idle connections.
func newHTTPConn(hc *http.Client, ht *headerTransport, flow *oauth.Flow) *conn {
	release := hc.CloseIdleConnections
	if flow != nil {
		release = func() { flow.Close(); hc.CloseIdleConnections() }
	}
	return &conn{release: release, ht: ht, capture: ht.capture}
}

func (b *Bridge) dialStreamable(ctx context.Context) (*conn, toolList, error) {
	timeout := b.connectTimeout()
	ctx, clock := oauth.NewClock(ctx, timeout)
	defer clock.Stop()
	hc, ht := newHTTPClient(&b.cfg, b.opts)
	flow, err := b.loginFlow(ht, clock, nil)
	if err != nil {
		hc.CloseIdleConnections()
		return nil, toolList{}, &ConnectError{Server: b.name, Err: err, msg: safeText(err)}
	}
	c := newHTTPConn(hc, ht, flow)
	t := &mcp.StreamableClientTransport{
		Endpoint:   b.cfg.URL,
		HTTPClient: hc,
		// One server-sent event is one message: the same bound as a stdio
		// frame. Plain JSON bodies are bounded by headerTransport.
		MaxEventSize: b.opts.maxFrame,
	}
	if flow != nil {
		t.OAuthHandler = flow
	}
	fail := func(phase string, err error) error {
		if c.session != nil {
			_ = c.session.Close()
		}
		c.release()
		if flow != nil {
			if lr := flow.Needed(); lr != nil {
				return &ConnectError{Server: b.name, Err: lr, msg: lr.Error()}
			}
		}
		if oauth.TimedOut(ctx) {
			err = fmt.Errorf("no answer within %s (the connect timeout): %w", timeout, err)
		}
		err = ht.explain(err)
		st := ht.firstPost.Load()
		legacy := st == 400 || st == 404 || st == 405
		msg := fmt.Sprintf("connecting to MCP server %s (%s) failed during %s: %s", b.name, b.cfg.URL, phase, safeText(err))
		if legacy && b.cfg.Transport == mcpconfig.TransportHTTP {
			msg += fmt.Sprintf(" (the server answered %d to a streamable HTTP request, as servers of the legacy SSE transport do; if it is one, set \"type\": \"sse\" or use --transport sse)", st)
		}
		ce := &ConnectError{Server: b.name, Err: err, legacy: legacy, msg: msg}
		if legacy && flow != nil {
			// A server that guards its SSE endpoint may have asked for
			// the login before refusing streamable HTTP: the SSE attempt
			// goes on with the tokens instead of logging in again.
			ce.tokens, _ = flow.TokenSource(ctx)
		}
		return ce
	}
	// No connection wrapper here: the SDK opens the standalone SSE stream
	// (which carries notifications such as tools/list_changed) only on its
	// own connection type. The raw schema bytes are captured in the HTTP
	// round tripper instead.
	if err := b.open(ctx, c, t, ""); err != nil {
		return nil, toolList{}, fail("initialize", err)
	}
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return nil, toolList{}, fail("tools/list", err)
	}
	b.listCatalog(ctx, c)
	b.start(c)
	return c, tools, nil
}

// InProcessServer is an MCP server running in this process: an
// *mcp.Server, or any server built on one that connects the same way
// (such as agentapp's own, package mcpserver).
type InProcessServer interface {
	Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
}

// ConnectInMemory connects to srv running in this process, over an
// in-memory transport. It is how tests (and embedders) plug our own server
// into the engine with the full protocol in between. A session that ends is
// reconnected on the next call, like a restarted stdio server.
func ConnectInMemory(ctx context.Context, name string, srv InProcessServer, opts ...ConnectOption) (*Bridge, error) {
	b := newBridge(mcpconfig.Server{Name: name}, buildOptions(opts))
	if err := b.initRoots(); err != nil {
		return nil, err
	}
	b.dial = func(ctx context.Context) (*conn, toolList, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, toolList{}, fmt.Errorf("starting in-memory MCP server %s: %w", name, err)
		}
		c := &conn{capture: newCapture(), release: func() {
			_ = ss.Close()
			_ = ss.Wait()
		}}
		if err := b.open(ctx, c, &captureTransport{inner: ct, cap: c.capture}, stdioProtocolVersion); err != nil {
			c.release()
			return nil, toolList{}, fmt.Errorf("connecting to in-memory MCP server %s: %w", name, err)
		}
		tools, err := b.listTools(ctx, c)
		if err != nil {
			_ = b.closeConn(c, false)
			return nil, toolList{}, fmt.Errorf("listing tools of in-memory MCP server %s: %w", name, err)
		}
		b.listCatalog(ctx, c)
		b.start(c)
		return c, tools, nil
	}
	if err := b.first(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// open runs initialize over t and stores the session in c.
func (b *Bridge) open(ctx context.Context, c *conn, t mcp.Transport, version string) error {
	if ct, ok := t.(*captureTransport); ok {
		// The server's sampling and elicitation may run as tasks of ours
		// where the connection can serve them (tasks.Requests).
		ct.cap.serving = tasks.NewRequests(b.opts.sampler != nil, b.opts.elicitor != nil)
	}
	client := mcp.NewClient(clientImpl, b.clientOptions(c))
	tasks.RegisterMethods(client)
	mcpskills.Register(client)
	client.AddSendingMiddleware(b.tracingMiddleware(c), nextgen.RootsNotice(), nextgen.LogLevel(b.serverLogLevel()))
	if c.proc != nil {
		// stdio only: on HTTP the server always answers, and its
		// server/discover may wait for an OAuth login.
		client.AddSendingMiddleware(discoverProbeMiddleware())
	}
	// Before connecting, so that a server asking for the roots as soon as
	// it is initialized gets them.
	b.side.rootsMu.Lock()
	client.AddRoots(b.side.roots...)
	b.side.rootsMu.Unlock()
	c.client = client
	var so *mcp.ClientSessionOptions
	if version != "" {
		so = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	s, err := client.Connect(ctx, t, so)
	if err != nil {
		return err
	}
	c.session = s
	b.afterOpen(ctx, c)
	return nil
}

// toolList is one listing of a server's tools as the bridge offers them.
type toolList struct {
	tools []*agent.Tool
	// remote maps each offered name to the server's name of the tool.
	remote map[string]string
	// readOnly holds the server's names of the tools with readOnlyHint.
	readOnly map[string]bool
	// meta holds each offered tool's _meta, as the server listed it
	// (apps.go reads its "ui" entry).
	meta map[string]map[string]any
	// until is when the listing goes stale by its caching hint (zero:
	// only a list_changed makes it stale); sum tells an unchanged one.
	until time.Time
	sum   [32]byte
}

// listTools reads every page of tools/list on c (within the listLimits)
// and adapts the tools the config lets through, under the names
// mcpconfig.ExposedName gives them. What a model provider would refuse, and what
// would make the table ambiguous, is skipped with a warning: a tool
// without a name, a second tool of the same name, and a tool whose mapped
// name another tool of the server already has. A valid name always keeps
// its tool, whatever order the server lists them in: a mapped name never
// shadows a real one.
func (b *Bridge) listTools(ctx context.Context, c *conn) (toolList, error) {
	c.capture.resetTools()
	var ttl listing.TTL
	listed, err := listing.All(ctx, b.name, "tools/list", b.opts.lists, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		res, err := c.session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		ttl.Page(res)
		return res.Tools, res.NextCursor, nil
	})
	if err != nil {
		return toolList{}, err
	}
	log := b.opts.logger
	names := make([]string, len(listed))
	taken := map[string]bool{}
	for i, t := range listed {
		if t == nil || !b.keep(t.Name) {
			continue
		}
		if t.Name == "" {
			log.Warn("mcp: the server offered a tool without a name; skipped", "server", b.name)
			continue
		}
		name, mapped := mcpconfig.ExposedName(b.cfg.ToolPrefix, t.Name)
		if mapped {
			continue // second pass
		}
		if taken[name] {
			log.Warn("mcp: the server offered a second tool of the same name; skipped", "server", b.name, "tool", name)
			continue
		}
		taken[name], names[i] = true, name
	}
	for i, t := range listed {
		if t == nil || t.Name == "" || names[i] != "" || !b.keep(t.Name) {
			continue
		}
		name, mapped := mcpconfig.ExposedName(b.cfg.ToolPrefix, t.Name)
		if !mapped {
			continue // a duplicate, reported above
		}
		if taken[name] {
			log.Warn("mcp: a tool's name is not one model providers accept, and its mapped name is taken by another tool of the server; skipped",
				"server", b.name, "tool", textsafe.Preview(t.Name, 100), "mapped", name)
			continue
		}
		log.Warn("mcp: a tool's name is not one model providers accept (1 to 64 letters, digits, _ and -); it is offered under a mapped name",
			"server", b.name, "tool", textsafe.Preview(t.Name, 100), "as", name)
		taken[name], names[i] = true, name
	}
	tl := toolList{remote: map[string]string{}, readOnly: map[string]bool{}, meta: map[string]map[string]any{},
		until: ttl.Until(!stdiofast.DirectAllowed(c.session)), sum: listing.Sum(listed)}
	for i, t := range listed {
		if names[i] == "" {
			continue
		}
		in, out := c.capture.schemas(t.Name)
		timeout := b.cfg.CallTimeout
		if b.runsAsTaskOn(c, t.Name) {
			timeout = b.taskTimeout()
		}
		tl.tools = append(tl.tools, adaptTool(b, b.name, t, names[i], in, out, timeout))
		tl.remote[names[i]] = t.Name
		if len(t.Meta) > 0 {
			tl.meta[names[i]] = t.Meta
		}
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			tl.readOnly[t.Name] = true
		}
	}
	return tl, nil
}

func (b *Bridge) keep(name string) bool {
	if len(b.cfg.AllowedTools) > 0 && !slices.Contains(b.cfg.AllowedTools, name) {
		return false
	}
	return !slices.Contains(b.cfg.ExcludedTools, name)
}

// CallTool implements ToolCaller: it sends tools/call on the live
// connection (on stdio by the bridge's direct path, package stdiofast; otherwise
// through the SDK's session), restarting the server first when it had
// stopped, and tracks the call so that Close can cancel it (the SDK's
// session close waits for calls in flight, so an unanswered call would
// otherwise hang Close).
//
// A call the server's exit cut short is not repeated: the tool may have
// done its work before the server died, and doing it twice (a second
// ticket) is worse than an error the model can explain. The next call gets
// the restarted server.
func (b *Bridge) CallTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if b.extOn(b.current()) {
		// The server decides which calls become tasks (tasks_ext.go).
		rctx, cancel, _ := b.bound(ctx)
		c, err := b.ready(rctx)
		cancel()
		if err != nil {
			return nil, err
		}
		if b.extOn(c) {
			return b.callExt(ctx, c, p)
		}
	}
	if b.taskTool(ctx, p) {
		return b.callTask(ctx, p)
	}
	ctx, cancel, _ := b.bound(ctx)
	defer cancel()
	c, err := b.ready(ctx)
	if err != nil {
		return nil, err
	}
	p, retire := b.withProgressToken(p)
	defer retire()
	res, err := b.tracedCall(ctx, c, p)
	if err != nil && c.ht != nil && b.isReadOnly(p.Name) && b.mayRetry(ctx, err) {
		// HTTP: the request may have reached the server before the
		// connection dropped; asking again is harmless only for a tool that
		// declares it changes nothing (readOnlyHint).
		b.opts.logger.Info("mcp: retrying a read-only tool call after a dropped connection", "server", b.name, "tool", p.Name, "error", err)
		if b.opts.restart.Sleep(ctx, httpRetryBase) == nil {
			if c2, rerr := b.ready(ctx); rerr == nil {
				c = c2
				res, err = c.session.CallTool(ctx, p)
			}
		}
	}
	if err != nil {
		err = b.callFailed(ctx, c, err)
	}
	return res, err
}

// callTool sends tools/call on c: on the direct path of a stdio
// connection (package stdiofast) when it has one, else through the SDK's session.
func (c *conn) callTool(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if c.direct == nil {
		return c.session.CallTool(ctx, p)
	}
	call := c.direct.CallTool
	if !stdiofast.DirectAllowed(c.session) {
		call = c.direct.CallToolModern // with the session's _meta
	}
	res, err := call(ctx, p)
	if errors.Is(err, stdiofast.ErrNeedsSDK) {
		return c.session.CallTool(ctx, p)
	}
	return res, err
}

// mayRetry reports whether a failed request may be sent again: it failed
// in transport, not because the server refused it or we gave up.
func (b *Bridge) mayRetry(ctx context.Context, err error) bool {
	_, rejected := serverRejected(err)
	return ctx.Err() == nil && !rejected && !errors.Is(context.Cause(ctx), errBridgeClosed)
}

func (b *Bridge) isReadOnly(remote string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.tools.readOnly[remote]
}

// callFailed words the error of a request that failed: the bridge was
// closed, or the server stopped under it (with its exit status and last
// stderr lines), or the error as it is.
func (b *Bridge) callFailed(ctx context.Context, c *conn, err error) error {
	if errors.Is(context.Cause(ctx), errBridgeClosed) {
		return fmt.Errorf("%w: %v", errBridgeClosed, err)
	}
	if _, rejected := serverRejected(err); ctx.Err() != nil || rejected {
		return err
	}
	if c.proc == nil && c.alive() && !errors.Is(err, mcp.ErrConnectionClosed) {
		// HTTP: the request failed but the session lives on (the round
		// tripper already retried what was safe to retry).
		return err
	}
	if reason, ended := awaitEnd(c); ended {
		return &serverExitError{Server: b.name, Reason: reason, Err: err}
	}
	return err
}

// ListResources lists every resource the server offers, all pages within
// the listLimits. Like every request of the bridge it is bounded by
// callTimeout when ctx has no deadline.
func (b *Bridge) ListResources(ctx context.Context) ([]*mcp.Resource, error) {
	return listOn(b, ctx, "listing resources", "resources/list", func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.Resource, string, error) {
		res, err := s.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
}

// listResourceTemplates lists every resource template the server offers,
// like ListResources.
func (b *Bridge) listResourceTemplates(ctx context.Context) ([]*mcp.ResourceTemplate, error) {
	return listOn(b, ctx, "listing resource templates", "resources/templates/list", func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		res, err := s.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

// ListPrompts lists every prompt the server offers, like ListResources.
func (b *Bridge) ListPrompts(ctx context.Context) ([]*mcp.Prompt, error) {
	return listOn(b, ctx, "listing prompts", "prompts/list", func(ctx context.Context, s *mcp.ClientSession, cursor string) ([]*mcp.Prompt, string, error) {
		res, err := s.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: cursor})
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// listOn runs one paginated listing on the live session (restarting the
// server first when it had stopped), bounded like every request and
// within the listLimits.
func listOn[T any](b *Bridge, ctx context.Context, what, method string, page func(context.Context, *mcp.ClientSession, string) ([]*T, string, error)) ([]*T, error) {
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s of MCP server %s: %w", what, b.name, err)
	}
	defer done()
	ctx, cancel, bound := b.bound(ctx)
	defer cancel()
	c, err := b.ready(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s of MCP server %s: %w", what, b.name, b.requestFailed(ctx, nil, err, bound))
	}
	items, err := listing.All(ctx, b.name, method, b.opts.lists, func(ctx context.Context, cursor string) ([]*T, string, error) {
		return page(ctx, c.session, cursor)
	})
	if err != nil {
		var le *listLimitError
		if errors.As(err, &le) {
			return nil, err // it names the server and the limit
		}
		return nil, fmt.Errorf("%s of MCP server %s: %w", what, b.name, b.requestFailed(ctx, c, err, bound))
	}
	return items, nil
}

// ReadResource reads one resource by URI, bounded like every request.
func (b *Bridge) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	what := fmt.Sprintf("reading %s from MCP server %s", textsafe.Preview(uri, 200), b.name)
	return request(ctx, b, what, func(ctx context.Context, s *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	})
}

// request runs one request other than tools/call on the live session: it
// is tracked (Close cancels it), bounded by the call timeout, waits for a
// restart in progress, and its error says what was being done (what).
func request[T any](ctx context.Context, b *Bridge, what string, do func(context.Context, *mcp.ClientSession) (T, error)) (T, error) {
	var zero T
	ctx, done, err := b.calls.track(ctx)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	defer done()
	ctx, cancel, bound := b.bound(ctx)
	defer cancel()
	c, err := b.ready(ctx)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, b.requestFailed(ctx, nil, err, bound))
	}
	res, err := do(ctx, c.session)
	if err != nil {
		return zero, fmt.Errorf("%s: %w", what, b.requestFailed(ctx, c, err, bound))
	}
	return res, nil
}

// requestFailed words the error of a request other than tools/call (whose
// errors the adapter words for the model): the server stopped under it,
// or the bound the bridge set expired, or the error as it is, with the
// server's words in it escaped for the terminal.
func (b *Bridge) requestFailed(ctx context.Context, c *conn, err error, bound time.Duration) error {
	if c != nil {
		err = b.callFailed(ctx, c, err)
	}
	if bound > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(context.Cause(ctx), errBridgeClosed) {
		return fmt.Errorf("no answer within %s (the call timeout; the server's \"timeout\" in the config sets it): %w", bound, escaped(err))
	}
	return escaped(err)
}

// Close ends the connection: calls in flight (and a restart in progress)
// are cancelled first, then the session is closed; a stdio server gets
// stdin EOF, then SIGTERM, then SIGKILL, each to its whole process group
// and to the helpers it started that left the group (found on Linux
// only; see supervise.AdoptOrphans), after the grace periods. Close is idempotent
// and never blocks much longer than the two grace periods.
func (b *Bridge) Close() error {
	b.closeOnce.Do(func() {
		b.calls.cancelAll()
		b.mu.Lock()
		b.state = StateClosed
		b.mu.Unlock()
		// A restart or re-listing in progress sees its context cancelled
		// and the closed state, and lets go.
		b.sem <- struct{}{}
		b.mu.Lock()
		c := b.cur
		b.cur = nil
		b.mu.Unlock()
		<-b.sem
		if c != nil {
			b.closeErr = b.closeConn(c, c.running())
		}
	})
	return b.closeErr
}

// closeConn ends one connection: politely (the close sequence with its
// grace periods) or, for a server that already crashed, by killing what is
// left of its process group at once.
func (b *Bridge) closeConn(c *conn, graceful bool) error {
	c.closing.Store(true)
	sessDone := make(chan error, 1)
	go func() {
		if c.session == nil {
			sessDone <- nil
			return
		}
		// Closes the transport, hence stdin: the EOF step.
		sessDone <- c.session.Close()
	}()
	if c.proc != nil {
		if graceful {
			c.proc.Stop(b.opts.eofGrace, b.opts.termGrace)
		} else {
			c.proc.Abort()
		}
		c.proc.Release()
	}
	t := time.NewTimer(supervise.KillWait)
	defer t.Stop()
	var err error
	select {
	case e := <-sessDone:
		if e != nil && !isBenignCloseError(e) {
			err = fmt.Errorf("closing MCP session with %s: %w", b.name, e)
		}
	case <-t.C:
		err = fmt.Errorf("closing MCP session with %s: the session did not shut down", b.name)
	}
	if c.release != nil {
		c.release()
	}
	if c.watchDone != nil {
		w := time.NewTimer(supervise.KillWait)
		defer w.Stop()
		select {
		case <-c.watchDone:
		case <-w.C:
		}
	}
	return err
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
