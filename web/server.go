package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/redact"
	"github.com/agentapp/agentapp/telemetry"
)

// Defaults of Options.
const (
	// DefaultApprovalTimeout is how long an approval waits for Allow or
	// Deny before the call is refused.
	DefaultApprovalTimeout = guard.DefaultConfirmTimeout
	// DefaultApprovalsPerClient bounds the approvals one client has
	// waiting: a person answers one at a time.
	DefaultApprovalsPerClient = 4
	// DefaultUnreadApprovalTimeout is the approval bound of a client that
	// left its last approval unanswered.
	DefaultUnreadApprovalTimeout = 10 * time.Second
	// DefaultMaxStreams bounds the turns running at once (event streams
	// and OpenAI completions alike); one more is answered 503.
	DefaultMaxStreams = 256
	// DefaultShutdownTimeout is how long Serve lets running turns finish
	// after it was asked to stop.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultReadTimeout and DefaultWriteTimeout bound reading a request
	// and writing each piece of an answer; a live event stream is not cut
	// by them (each event gets a fresh write deadline).
	DefaultReadTimeout  = 30 * time.Second
	DefaultWriteTimeout = 30 * time.Second
	// DefaultModelID is the model name /v1/models offers.
	DefaultModelID = "agentapp"
)

// Limits that are not options: they keep any one request small.
const (
	// maxMessageBody bounds the body of a chat message: 8,000 characters
	// of four bytes each, JSON-escaped, fit.
	maxMessageBody = 64 << 10
	// maxCompletionBody bounds an OpenAI request, which carries the whole
	// conversation.
	maxCompletionBody = 1 << 20
	// maxSmallBody bounds every other JSON body.
	maxSmallBody = 4 << 10
	// maxPendingApprovals bounds the approvals waiting at once, server-wide.
	maxPendingApprovals = 1024
	// historyLimit is how many stored messages GET /api/sessions/{id}
	// returns, the newest.
	historyLimit = 400
)

// Options configure a Server. Host is required; a nil or zero field
// means its default.
type Options struct {
	// Host is the host the web fronts (cmd/agentapp opens it with
	// host.Open); the Server owns it: Close, or a failing New, closes it.
	// Its guards protect the turns as they protect the chat; the Server
	// asks their confirmations on the page.
	Host *host.Host

	// Operator are the routes of the operator view, by pattern ("GET
	// /operator", every path under /operator): the composition mounts them
	// (assistant.Operator), the server puts the operator token in front.
	// None serves no operator view.
	Operator map[string]http.Handler
	// AllowInProject allows server's tool in this project from now on
	// (cmd/agentapp writes the local scope's permissions) and returns the
	// file written; the approval card offers "Always for this project"
	// when it is set.
	AllowInProject func(server, tool string) (file string, err error)
	// Token, when set, is required for the operator view (Bearer, or the
	// password of HTTP Basic so a browser can send it). Empty leaves the
	// operator view open, which only a loopback server may do; the
	// command line enforces that.
	Token string
	// Operators are named operators, each with a token of their own
	// (--operator NAME:TOKEN): their token opens the operator view as
	// Token does, and names them to the customers they talk with.
	Operators []Operator
	// APIKeys, when any is set, are the keys of the OpenAI-compatible
	// endpoint: every /v1 request must carry one as "Authorization: Bearer
	// <key>", as an OpenAI client sends its API key, and is answered 401
	// in OpenAI's error shape otherwise. None leaves /v1 open, which the
	// command line allows off loopback only when asked to.
	APIKeys []string
	// MetricsToken, when set, is required (Bearer, or the password of HTTP
	// Basic) for /metrics and for the details of /readyz: server names,
	// states and database errors. Without it /readyz still answers its
	// status code and {"ready": bool}, which is what a load balancer needs.
	// Empty leaves both open (cmd/agentapp gives the operator token).
	MetricsToken string
	// Secrets are taken out (package internal/redact) of everything the
	// server logs and traces, besides anything key-shaped: give the model
	// provider's API key. The keys and tokens above are added by New.
	Secrets []string
	// Logger receives what the server reports; nil discards.
	Logger *slog.Logger
	// Trace, when set, receives a trace (package trace) of every turn: its
	// think, act, observe and done lines, each labelled with the turn's
	// session ("session=ID"; the OpenAI endpoint's turns have ids of their
	// own, "oa-…") so concurrent turns can be told apart.
	Trace io.Writer
	// Tracing, when set, continues the trace of a message's or a
	// completion's traceparent header: a server span per request, the
	// turn's span under it. Without it a turn is traced only if the
	// host has a Tracing (host.Options).
	Tracing *telemetry.Tracing

	// ApprovalTimeout bounds the wait for Allow or Deny; 0 means
	// DefaultApprovalTimeout.
	ApprovalTimeout time.Duration
	// ApprovalsPerClient bounds the approvals waiting at once from one
	// client (an IPv4 address, or an IPv6 /64); one more is refused at
	// once, so its turn ends and frees its slot. 0 means
	// DefaultApprovalsPerClient.
	ApprovalsPerClient int
	// UnreadApprovalTimeout replaces ApprovalTimeout for a client whose
	// last approval ran out unanswered (a script that opens streams and
	// never reads them), until it answers one; 0 means
	// DefaultUnreadApprovalTimeout.
	UnreadApprovalTimeout time.Duration
	// Clock is the time source of approvals and rate limits; nil is the
	// system clock.
	Clock Clock
	// OperatorTimeout is how long a conversation an operator holds stays
	// theirs while no operator stream is open and they do nothing on it;
	// then it returns to the waiting queue. 0 means
	// DefaultOperatorTimeout, negative never.
	OperatorTimeout time.Duration

	// MaxStreams bounds the turns running at once; 0 means
	// DefaultMaxStreams.
	MaxStreams int
	// AddressRate limits the requests that start work (a session, a
	// message, an approval, a completion) per client address; the zero
	// value means DefaultAddressRate, Unlimited turns it off.
	AddressRate Rate
	// SessionRate limits the messages per session; the zero value means
	// DefaultSessionRate.
	SessionRate Rate

	// ReadTimeout and WriteTimeout configure the http.Server of Serve and
	// NewHTTPServer; 0 means the defaults.
	ReadTimeout, WriteTimeout time.Duration
	// ShutdownTimeout bounds the drain of running turns in Serve; 0 means
	// DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// ModelID is the model name of the OpenAI-compatible endpoint; empty
	// means DefaultModelID.
	ModelID string

	// SandboxOrigin is the origin (scheme, host, port) where
	// SandboxHandler is served, another origin than the page's: the page
	// renders MCP Apps views through it. Empty turns views off (steps show
	// their text only).
	SandboxOrigin string
	// AppRate limits a session's requests from views; the zero value
	// means DefaultAppRate.
	AppRate Rate
}

// Server is the web front end. Create it with New, serve Handler (or call
// Serve), then Close.
type Server struct {
	opts     Options
	log      *slog.Logger
	clock    Clock
	h        *host.Host
	sessions *host.SessionStore
	guards   *guard.Guards
	metrics  *metrics
	handler  http.Handler
	writes   writeChecks // /readyz's write check (unavailable.go)

	// known are the sessions seen stored, checked before the store
	// (known.go); nil asks the store every time.
	known *knownSessions

	streams  chan struct{} // one token per running turn
	burst    *burst        // holds turns while their burst arrives (burst.go)
	addrLim  *limiter
	sessLim  *limiter
	appLim   *limiter // views' requests per session (apps.go)
	draining atomic.Bool

	// summaries keeps /v1's summaries of folded prefixes (v1cache.go).
	summaries *summaryLRU

	// feed wakes the conversations' standing streams
	// (conversations.go); watching is its watcher.
	feed     *eventFeed
	watching sync.WaitGroup
	present  presence // operators' streams and actions (absent.go)
	// keepAlive spaces the standing streams' keep-alive comments; 0
	// means keepAliveEvery (tests shorten it).
	keepAlive time.Duration

	// drained is closed when a shutdown begins: pending approvals are
	// refused then, so their turns can finish within the drain.
	drained   chan struct{}
	drainOnce sync.Once

	mu        sync.Mutex
	active    map[string]bool      // sessions with a turn running
	approvals map[string]*approval // pending, by id
	// remembered holds the tools allowed for the rest of a session
	// ("Always this session"), kept with the session.
	remembered *host.SessionApprovals
	waiting    map[string]int // pending approvals by client key
	// unread holds the clients whose last approval ran out unanswered:
	// theirs get UnreadApprovalTimeout until they answer one.
	unread map[string]bool
	// appContexts holds, by session, what a view asked the model to know
	// at the next message (apps.go).
	appContexts map[string]appContext

	// hardStop is cancelled when the drain at shutdown runs out: the
	// turns still running are cancelled then.
	hardStop   context.Context
	cancelHard context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// New checks opts and prepares the front end over opts.Host. On error it
// closes the host, so no server process outlives a web front end that did
// not start.
func New(ctx context.Context, opts Options) (s *Server, err error) {
	h := opts.Host
	if h == nil {
		return nil, errors.New("web: no host (open one with host.Open)")
	}
	defer func() {
		if err != nil {
			_ = h.Close()
		}
	}()
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.MaxStreams <= 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.ApprovalsPerClient <= 0 {
		opts.ApprovalsPerClient = DefaultApprovalsPerClient
	}
	if opts.UnreadApprovalTimeout <= 0 {
		opts.UnreadApprovalTimeout = min(DefaultUnreadApprovalTimeout, opts.ApprovalTimeout)
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = DefaultReadTimeout
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = DefaultWriteTimeout
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = DefaultShutdownTimeout
	}
	if opts.ModelID == "" {
		opts.ModelID = DefaultModelID
	}
	if opts.AddressRate == (Rate{}) {
		opts.AddressRate = DefaultAddressRate
	}
	if opts.SessionRate == (Rate{}) {
		opts.SessionRate = DefaultSessionRate
	}
	if opts.AppRate == (Rate{}) {
		opts.AppRate = DefaultAppRate
	}
	if opts.SandboxOrigin != "" {
		if err := CheckSandboxOrigin(opts.SandboxOrigin); err != nil {
			return nil, err
		}
		opts.SandboxOrigin = strings.TrimSuffix(opts.SandboxOrigin, "/")
	}
	s = &Server{
		opts:      opts,
		log:       opts.Logger,
		clock:     opts.Clock,
		streams:   make(chan struct{}, opts.MaxStreams),
		burst:     newBurst(burstQuiet, burstMax),
		drained:   make(chan struct{}),
		active:    map[string]bool{},
		approvals: map[string]*approval{},
		waiting:   map[string]int{},
		unread:    map[string]bool{},

		appContexts: map[string]appContext{},
		metrics:     newMetrics(),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	// A provider's error can quote the key, and a turn's details go to the
	// log and the trace: both see text with the secrets taken out.
	secrets := append(append([]string{opts.Token, opts.MetricsToken}, opts.APIKeys...), opts.Secrets...)
	for _, op := range opts.Operators {
		secrets = append(secrets, op.Token)
	}
	s.log = slog.New(redact.Handler(s.log.Handler(), secrets...))
	if opts.Trace != nil {
		s.opts.Trace = redact.Writer(opts.Trace, secrets...)
	}
	if s.clock == nil {
		s.clock = realClock{}
	}
	s.addrLim = newLimiter(opts.AddressRate, s.clock)
	s.sessLim = newLimiter(opts.SessionRate, s.clock)
	s.appLim = newLimiter(opts.AppRate, s.clock)
	s.summaries = newSummaryLRU(v1SummaryEntries)
	s.hardStop, s.cancelHard = context.WithCancel(context.Background())
	s.h = h
	s.metrics.tokens = tokenMetrics{h}
	s.sessions = h.Sessions()
	s.known = newKnownSessions(knownCap, knownTTL)
	if err := MigrateAppSteps(ctx, h.Store()); err != nil {
		return nil, err
	}
	if s.remembered, err = host.OpenSessionApprovals(ctx, h.Store(), s.clock.Now); err != nil {
		return nil, err
	}
	s.guards = h.Guards()
	if s.handler, err = s.routes(); err != nil {
		return nil, err
	}
	s.feed = newEventFeed()
	s.watching.Go(func() { s.watchEvents(s.hardStop) })
	s.present.started = s.clock.Now()
	s.watching.Go(func() { s.watchAbsent(s.hardStop) })
	return s, nil
}

// Handler returns the whole front end: API, OpenAI endpoint, page,
// operator view, health and metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// NewHTTPServer returns an http.Server for Handler with the timeouts of
// Options: a slow client cannot hold a connection, and a live event stream
// is not cut.
func (s *Server) NewHTTPServer() *http.Server {
	return &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: min(s.opts.ReadTimeout, 10*time.Second),
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Serve serves on ln until ctx is done, then shuts down gracefully: new
// turns are refused (503), running turns may finish within
// Options.ShutdownTimeout and are cancelled after it, and the MCP servers
// are closed. It returns nil after a shutdown that ctx asked for.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := s.NewHTTPServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	s.startDrain()
	drainCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(drainCtx); err != nil {
		s.log.Warn(fmt.Sprintf("running turns did not finish within %v; cancelling them", s.opts.ShutdownTimeout))
		s.cancelHard()
		_ = srv.Close()
	}
	closeErr := s.Close()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return closeErr
}

// startDrain refuses new turns and pending approvals from now on, and
// starts the turns held in a burst.
func (s *Server) startDrain() {
	s.draining.Store(true)
	s.drainOnce.Do(func() { close(s.drained) })
	s.burst.flush()
}

// Close cancels any turn still running and closes the host, with every
// MCP server; it is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.cancelHard()
		s.watching.Wait() // it reads the store Close closes
		s.closeErr = s.h.Close()
	})
	return s.closeErr
}

// Metrics returns the handler of the metrics' text exposition, for a caller
// that serves metrics elsewhere; Handler serves it at /metrics.
func (s *Server) Metrics() http.Handler { return s.metrics.handler() }

// randomID returns 128 random bits in hex with a prefix. Session ids are
// capabilities (whoever has one reads the conversation), so they are not
// guessable, unlike the terminal chat's readable ones.
func randomID(prefix string) string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + hex.EncodeToString(b[:])
}
