package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/internal/trust"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is the endpoint of the streamable HTTP transport.
const HTTPPath = "/mcp"

// Defaults of HTTPOptions.
const (
	// DefaultMaxSessions bounds the HTTP sessions open at once. A session
	// costs the server about 13 KB while it lasts, so the bound keeps a
	// client that opens sessions and never ends them to about 13 MB.
	DefaultMaxSessions = 1000
	// DefaultSessionIdleTimeout is how long an HTTP session may go without
	// a request before the server forgets it. A client that comes back
	// later gets 404 for the old session and, as the protocol prescribes,
	// starts a new one; clients that want to keep a session longer ping.
	DefaultSessionIdleTimeout = 5 * time.Minute
)

// HTTPOptions configure NewHTTPHandler; nil means the defaults.
type HTTPOptions struct {
	// Token, when not empty, is the bearer token every request must carry
	// ("Authorization: Bearer <token>"). Surrounding white space is not
	// part of it, as it is not of the token a client sends. ResolveHTTPAddr
	// refuses a token that is only white space; given one anyway, the
	// handler refuses every request rather than none. Several tokens,
	// one per client, are separated by commas (a character no bearer
	// token has): each client is then a caller of its own, whose tasks
	// no other can see (tasks.go).
	Token string
	// Logger receives transport activity; nil discards. Never stdout.
	Logger *slog.Logger
	// MaxSessions bounds the MCP sessions open at once; 0 means
	// DefaultMaxSessions and a negative value sets no bound. When a new
	// session would go over it, the session that has been idle longest
	// (no POST or DELETE in progress, the oldest last request) is closed
	// to make room; its client gets 404 on its next request and starts a
	// new session. If every session is busy, the new one is refused with
	// 503.
	MaxSessions int
	// SessionIdleTimeout is how long a session may go without a request
	// before it is closed; 0 means DefaultSessionIdleTimeout and a
	// negative value keeps idle sessions until the server stops (or
	// MaxSessions evicts them). An open GET event stream does not count as
	// a request, as in the SDK; clients keep a session with pings.
	SessionIdleTimeout time.Duration
	// Stateless serves every request on its own, with no MCP session
	// kept between requests, so that any of several replicas behind a
	// load balancer can answer any request (see stateless.go).
	// MaxSessions and SessionIdleTimeout do not apply.
	Stateless bool
}

// Defaults of RunOptions.
const (
	// DefaultShutdownGrace is how long RunHTTP lets in-flight requests
	// finish after it is told to stop.
	DefaultShutdownGrace = 5 * time.Second
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout bounds reading a request's body (a JSON-RPC
	// message, at most 4 MiB) once its headers are in.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a kept-alive connection may wait for
	// its next request. Clients open a new connection when they need one.
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxConnections bounds the connections open at once. Each MCP
	// client of the streamable transport holds one or two (its GET event
	// stream and its POSTs).
	DefaultMaxConnections = 256
	// ConnectionsPerSession is what one MCP session of the streamable
	// transport is counted to hold: its GET event stream, and two
	// connections for each of two requests in flight, with one to spare.
	// (The TypeScript SDK client holds two per request in flight under
	// load: 16 sessions with 1, 2 and 4 calls in flight each held 48, 80
	// and 144 connections.)
	ConnectionsPerSession = 6
	// DefaultSessionsPerAddress is how many such sessions one client
	// address is served at once by default.
	DefaultSessionsPerAddress = 16
	// DefaultMaxConnectionsPerAddress bounds the connections of one client
	// address, so that one client cannot take all DefaultMaxConnections.
	// It does not apply to loopback clients unless asked
	// (RunOptions.PerAddressOnLoopback).
	DefaultMaxConnectionsPerAddress = DefaultSessionsPerAddress * ConnectionsPerSession
)

// RunOptions configure RunHTTP; nil, and every zero field, means the
// default, and a negative timeout means none. The timeouts are what stops
// a client that opens connections and sends nothing, or sends slowly, from
// holding them: without them, every connection a client opened would stay
// open for as long as it liked.
type RunOptions struct {
	// ShutdownGrace is how long in-flight requests may finish after ctx
	// is done; 0 (or less) means DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// ReadHeaderTimeout bounds reading the headers of a request, from
	// the moment the connection is ready for it; 0 means
	// DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading the body of a request once its
	// headers are read; 0 means DefaultBodyReadTimeout. It applies to
	// requests with a body only, never to the GET event stream, which
	// stays open as long as the session wants it; once the body is read,
	// the request may take as long as its tool call does.
	BodyReadTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request; 0 means DefaultIdleTimeout. An open event stream is a
	// request in progress, not an idle connection.
	IdleTimeout time.Duration
	// MaxConnections bounds the connections open at once; 0 means
	// DefaultMaxConnections and a negative value sets no bound. A
	// connection beyond it is answered 503 at once and closed.
	MaxConnections int
	// MaxConnectionsPerAddress bounds the connections open at once from
	// one client address (an IPv6 /64 counts as one), counted before any
	// request is read, so before the token is checked; 0 means
	// DefaultMaxConnectionsPerAddress and a negative value sets no bound.
	// Behind a proxy or load balancer every client has its address: raise
	// it or turn it off there. Beyond it, a connection is answered 503.
	MaxConnectionsPerAddress int
	// PerAddressOnLoopback applies MaxConnectionsPerAddress to loopback
	// clients too. Off by default: every local client shares the one
	// loopback address, so there the bound only split the total among
	// them (16 sessions of one local client were refused), and
	// MaxConnections still bounds them all.
	PerAddressOnLoopback bool
	// Logger receives the server's activity; nil discards. Never stdout.
	Logger *slog.Logger
}

// ResolveHTTPAddr checks and completes the address given to
// `agentapp serve --http`, and the bearer token. A missing host means
// loopback (":8080" and "8080" both become "127.0.0.1:8080"): the server is
// for local clients unless told otherwise. Any address that is not
// loopback needs a bearer token, because everyone who can reach it could
// otherwise call the tools and read the documents; without one,
// ResolveHTTPAddr refuses.
//
// A name under .localhost (app.localhost) is loopback by RFC 6761, and
// the server treats it so, but resolvers need not know that: left to DNS,
// such a name could resolve to any address, and a server started on it
// without a token would listen there. So it becomes 127.0.0.1, which is
// what the name means. ("localhost" itself is kept: the system resolves it
// from its hosts file.)
//
// A token that is set but blank would refuse every client, and one with
// control characters cannot be sent in a header; both are refused here.
func ResolveHTTPAddr(addr, token string) (string, error) {
	if err := checkToken(token); err != nil {
		return "", err
	}
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("empty --http address; use host:port, for example 127.0.0.1:8080 (port 0 picks a free one)")
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("invalid --http address %q: %v; use host:port, for example 127.0.0.1:8080", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("invalid port %q in --http address %q; use a number from 0 to 65535", port, addr)
	}
	if host == "" || trust.IsLocalhostSubdomain(host) {
		host = "127.0.0.1"
	}
	if !trust.IsLoopbackHost(host) && token == "" {
		return "", fmt.Errorf("refusing to serve on %s without a bearer token: every machine that can reach it could call the tools and read the documents. "+
			"Set --token or AGENTAPP_SERVER_TOKEN, or bind a loopback address such as 127.0.0.1:%s", net.JoinHostPort(host, port), port)
	}
	return net.JoinHostPort(host, port), nil
}

// checkToken refuses a bearer token no client could send (see
// ResolveHTTPAddr). The empty token means none.
func checkToken(tokens string) error {
	for _, token := range splitTokens(tokens) {
		if err := checkOneToken(token); err != nil {
			return err
		}
	}
	return nil
}

// splitTokens splits Token into its tokens (none for "").
func splitTokens(tokens string) []string {
	if tokens == "" {
		return nil
	}
	return strings.Split(tokens, ",")
}

func checkOneToken(token string) error {
	if token == "" {
		return errors.New("the bearer tokens (--token or AGENTAPP_SERVER_TOKEN) hold an empty one between commas; separate tokens by single commas")
	}
	trimmed := strings.TrimSpace(token)
	if trimmed == "" {
		return errors.New("the bearer token (--token or AGENTAPP_SERVER_TOKEN) is only white space, so every client would be refused; " +
			"set a token of printable characters (for example the output of `openssl rand -hex 32`), or unset it to serve on a loopback address without one")
	}
	if strings.ContainsFunc(trimmed, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return errors.New("the bearer token (--token or AGENTAPP_SERVER_TOKEN) holds a control character, which no client can send in an HTTP header; use printable characters only")
	}
	return nil
}

// NewHTTPHandler serves server over the streamable HTTP transport at
// HTTPPath, behind two guards the SDK leaves (partly) to the application:
//
//   - DNS rebinding: a request that reached a loopback address must name a
//     loopback host in Host, and a browser's Origin, when present, must be
//     a loopback origin or the server's own. A page on evil.example whose
//     name was re-pointed at 127.0.0.1 is refused with 403 before it can
//     call a tool. (The SDK checks Host only, and not Origin.)
//   - Bearer token: with opts.Token set, a request without the right
//     "Authorization: Bearer" header gets 401. Tokens are compared in
//     constant time.
//
// Both are decided on the headers alone. A refused request's body is never
// read: the refusal is written at once and the connection closed after it
// (Connection: close), so a client cannot hold a connection by sending a
// body slowly, nor keep one alive without the token.
//
// The handler also bounds the sessions open at once and closes idle ones
// (HTTPOptions.MaxSessions, SessionIdleTimeout).
func NewHTTPHandler(server *Server, opts *HTTPOptions) *HTTPHandler {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	idle := opts.SessionIdleTimeout
	switch {
	case idle == 0:
		idle = DefaultSessionIdleTimeout
	case idle < 0:
		idle = 0 // the SDK's "never"
	}
	maxSessions := opts.MaxSessions
	if maxSessions == 0 {
		maxSessions = DefaultMaxSessions
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.mcp }, &mcp.StreamableHTTPOptions{
		Logger: logger,
		// The idle timeout is sessionCap's, not the SDK's: the SDK's timer
		// hears only of the requests it serves, and the direct path
		// (httpdirect.go) answers most tools/call without it.
		Stateless: opts.Stateless,
		// Every request's answer is one message: the server's tools send
		// no progress, log or server-to-client request while they run.
		// application/json spares each client its event-stream parser
		// (the TypeScript SDK client spends about a third less CPU per
		// call, bench/NOTES.md); anything not tied to a request still
		// goes out on the GET stream.
		JSONResponse: true,
	})
	// The requests of protocol 2026-07-28 and later go to a stateless
	// handler on the same server (generation.go); with Stateless set, the
	// one handler is that already. A stateless request has no GET stream
	// for the messages its call sends before the answer (progress, logs),
	// so one that asks for them is answered as an event stream, by a
	// second stateless handler (wantsStream).
	statelessHandler := func(jsonResponse bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.mcp }, &mcp.StreamableHTTPOptions{
			Logger:       logger,
			Stateless:    true,
			JSONResponse: jsonResponse,
		})
	}
	nextJSON := http.Handler(mcpHandler)
	if !opts.Stateless {
		nextJSON = statelessHandler(true)
	}
	nextStream := statelessHandler(false)
	for _, part := range splitTokens(opts.Token) {
		if strings.TrimSpace(part) == "" {
			// Fail closed: a blank token must not mean no token
			// (trust.NewSecrets keeps it, and it matches no client).
			logger.Error("a bearer token is only white space; it will be refused")
		}
	}
	tokens := trust.NewSecrets(splitTokens(opts.Token)...)
	h := &HTTPHandler{server: server.mcp, sessions: &sessionCap{max: maxSessions, idle: idle, server: server.mcp,
		ended: func(id string) { server.taskNotes.forget("mcp:" + id) }}}
	if !opts.Stateless {
		// Sessions whose client can be asked (elicitation, sampling)
		// get event-stream answers (askingSession): what a call
		// asks then goes on the call's own stream, not on a GET stream
		// the client may not have opened yet.
		h.sessions.asking = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.mcp }, &mcp.StreamableHTTPOptions{Logger: logger})
	}
	mux := http.NewServeMux()
	mux.HandleFunc(HTTPPath, func(w http.ResponseWriter, r *http.Request) {
		if msg := rebindingProblem(r); msg != "" {
			logger.Warn("refused a request with a foreign Host or Origin", "host", r.Host, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
			refuse(w, "Forbidden: "+msg, http.StatusForbidden)
			return
		}
		if opts.Token != "" && !tokens.MatchBearer(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentapp"`)
			refuse(w, "Unauthorized: send the header \"Authorization: Bearer <token>\" with the token the server was started with (--token or AGENTAPP_SERVER_TOKEN)", http.StatusUnauthorized)
			return
		}
		if precheck(w, r) {
			return
		}
		var body []byte
		if r.Method == http.MethodPost {
			var ok bool
			if body, ok = checkBodyIDs(w, r); !ok {
				return
			}
			release, ok := h.batches.admit(w, body)
			if !ok {
				return
			}
			defer release()
		}
		// Before the session bound, which would count a request of the
		// sessionless generation as a new session.
		if opts.Stateless || isNextGeneration(r, body) {
			if id, bad := taskNameMismatch(r, body); bad {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"the Mcp-Name header does not match params.taskId"}}`, cmp.Or(string(id), "null"))
				return
			}
			if server.serveDirectNext(w, r, body) {
				return
			}
			if wantsStream(body) {
				nextStream.ServeHTTP(w, r)
			} else {
				nextJSON.ServeHTTP(w, r)
			}
			return
		}
		h.sessions.serve(w, r, mcpHandler, logger, server, body)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		refuse(w, "Not Found: the MCP endpoint is "+HTTPPath, http.StatusNotFound)
	})
	h.mux = mux
	return h
}

// checkBodyIDs reads the body of a POST (within the SDK's own bound) and
// refuses it with a JSON-RPC error when a message's id could not be echoed
// exactly (see idProblem); otherwise it puts the body back for the SDK and
// returns it, valid JSON or nil, for the direct path (httpdirect.go). It
// writes the answer itself when it reports false.
func checkBodyIDs(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, mcp.DefaultMaxRequestBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			refuse(w, fmt.Sprintf("Request Entity Too Large: the body is over the %d-byte limit", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		refuse(w, "Bad Request: the body could not be read: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	valid := json.Valid(body)
	if valid {
		if problem := idProblem(body); problem != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(appendErrorResponse(nil, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: "+problem))
			return nil, false
		}
	}
	body = liftTaskBody(body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !valid {
		return nil, true
	}
	return body, true
}

// refuse answers a request the server will not serve, without reading its
// body, and closes the connection once the answer is written. Left open,
// the connection would be kept alive, and the server would first read
// (and discard) the rest of the body, however slowly it came.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
}

// HTTPHandler is the MCP endpoint built by NewHTTPHandler.
type HTTPHandler struct {
	mux      *http.ServeMux
	server   *mcp.Server
	sessions *sessionCap
	batches  batchBudget
}

// ServeHTTP implements http.Handler.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// CloseSessions ends every open MCP session. RunHTTP calls it once the
// HTTP server has stopped, so no session outlives the server.
func (h *HTTPHandler) CloseSessions() {
	for ss := range h.server.Sessions() {
		ss.Close()
	}
}

// sessionIDHeader carries the streamable transport's session id.
const sessionIDHeader = "Mcp-Session-Id"

// sessionCap keeps the HTTP sessions within a bound (HTTPOptions
// MaxSessions). It sees every request: a POST without a session id asks
// for a new session, and is let through only once there is room for it,
// made if need be by closing the session idle longest; a request with an
// id marks that session in use until it ends.
//
// A session being created counts against the bound from the moment room
// is made for it, so concurrent initializes cannot overshoot it.
//
// It also closes a session idle for longer than HTTPOptions.SessionIdleTimeout
// (see expire). The SDK has such a timer too, but it is restarted only by
// the requests the SDK serves, and the direct path answers tools/call
// without the SDK: a session used only that way would be closed while in
// use. sessionCap sees every request, so the timer is its own.
//
// Requests on open sessions take no lock: one shared mutex there, taken
// twice by every request, was where 256 busy sessions queued (a lock
// convoy: each hand-off waited for the next holder to be scheduled) and
// what made the tail of their latencies (bench/NOTES.md). The mutex now
// guards only what changes the set of sessions.
type sessionCap struct {
	max    int           // < 0: no bound
	idle   time.Duration // 0: sessions are never closed for being idle
	server *mcp.Server
	// asking serves the sessions of clients that can be asked, answering
	// as event streams (askingSession); nil: none are set apart.
	asking http.Handler
	// askingIDs holds the ids of asking's sessions, recorded as the SDK
	// writes the id header (so before the client can use it) and removed
	// when the session ends.
	askingIDs sync.Map

	open sync.Map // session id → *capSession; stored and deleted under mu
	// ended, if set, hears of each session that ended.
	ended func(id string)

	mu      sync.Mutex
	n       int // sessions in open
	pending int // sessions being created
}

// capSession is what sessionCap knows of one session.
type capSession struct {
	ss *mcp.ServerSession
	// busy counts the POST and DELETE requests in progress; -1 once the
	// session was chosen for eviction or closed as idle, after which it
	// counts nothing.
	busy atomic.Int32
	// last is the start or end of its last POST or DELETE, or its
	// creation: nanoseconds since capEpoch. (A GET event stream is not a
	// request that keeps a session, as in the SDK.)
	last atomic.Int64
	// timer closes the session once it has been idle for sessionCap.idle
	// (expire); nil without an idle timeout.
	timer *time.Timer

	// The direct path's view of the session (httpdirect.go).
	direct directSession
}

// capEpoch is the origin of capSession.last, whose differences are
// monotonic (time.Since).
var capEpoch = time.Now()

func capNow() int64 { return int64(time.Since(capEpoch)) }

// serve passes r to next, the SDK's handler, keeping the session count
// (see sessionCap), or answers it on srv's direct path (httpdirect.go).
// body is the POST's body if it is valid JSON.
func (c *sessionCap) serve(w http.ResponseWriter, r *http.Request, next http.Handler, logger *slog.Logger, srv *Server, body []byte) {
	id := r.Header.Get(sessionIDHeader)
	if id != "" || r.Method != http.MethodPost {
		if id != "" {
			busy := r.Method != http.MethodGet
			_, asking := c.askingIDs.Load(id)
			if asking {
				// Its calls take the SDK's path, whose answers are
				// event streams there.
				next = c.asking
			}
			if s := c.use(id, busy); s != nil {
				defer s.done(busy)
				if r.Method == http.MethodGet {
					// The GET stream is the session's channel for its
					// tasks' status notifications (tasks_notify.go).
					nw := &noteWriter{ResponseWriter: w}
					defer nw.end()
					defer srv.taskNotes.addSink("mcp:"+id, nw.note, false)()
					w = nw
				}
				if r.Method == http.MethodDelete {
					// The SDK closes the session before it answers 204, but
					// hears of it only when ss.Wait returns in created's
					// goroutine; until then the direct path would still
					// answer calls on it. Forget it before the client can
					// send another request.
					sw := &statusSpy{ResponseWriter: w}
					next.ServeHTTP(sw, r)
					if sw.status == http.StatusNoContent {
						c.forget(id, s)
					}
					return
				}
				if body != nil && !asking {
					taken, call := srv.serveDirect(w, r, s, body)
					if taken {
						return
					}
					if call.IsValid() {
						defer s.direct.passed(call)
					}
				}
			}
		}
		next.ServeHTTP(w, r)
		return
	}
	victims, ok := c.reserve()
	if !ok {
		logger.Warn("refused a new session: every session is busy", "max", c.max)
		w.Header().Set("Retry-After", "1")
		refuse(w, fmt.Sprintf("Service Unavailable: the server already has %d MCP sessions, all busy; try again shortly", c.max), http.StatusServiceUnavailable)
		return
	}
	for _, v := range victims {
		logger.Info("closed the MCP session idle longest to make room for a new one", "session", v.ID(), "max", c.max)
		v.Close()
	}
	asking := c.asking != nil && askingSession(body)
	if asking {
		next = c.asking
		w = &idSpy{ResponseWriter: w, record: func(id string) { c.askingIDs.Store(id, true) }}
	}
	created := ""
	defer func() { c.created(created) }()
	next.ServeHTTP(w, r)
	created = w.Header().Get(sessionIDHeader)
}

// idSpy records the session id the SDK puts in a response's headers as
// they are written, before the client can read them.
type idSpy struct {
	http.ResponseWriter
	record func(id string)
	seen   bool
}

func (w *idSpy) spy() {
	if !w.seen {
		w.seen = true
		if id := w.Header().Get(sessionIDHeader); id != "" {
			w.record(id)
		}
	}
}

func (w *idSpy) WriteHeader(code int) { w.spy(); w.ResponseWriter.WriteHeader(code) }

func (w *idSpy) Write(b []byte) (int, error) { w.spy(); return w.ResponseWriter.Write(b) }

func (w *idSpy) Flush() {
	w.spy()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *idSpy) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// reserve makes room for one new session and counts it as pending. It
// returns the sessions to close for it, the longest idle first, or false
// if there are not enough idle ones.
func (c *sessionCap) reserve() (victims []*mcp.ServerSession, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if need := c.n + c.pending + 1 - c.max; c.max >= 0 && need > 0 {
		type idle struct {
			id   string
			s    *capSession
			last int64
		}
		var candidates []idle
		c.open.Range(func(k, v any) bool {
			if s := v.(*capSession); s.busy.Load() == 0 {
				candidates = append(candidates, idle{k.(string), s, s.last.Load()})
			}
			return true
		})
		if len(candidates) < need {
			return nil, false
		}
		slices.SortFunc(candidates, func(a, b idle) int { return cmp.Compare(a.last, b.last) })
		// A candidate that a request took in the meantime is skipped: the
		// claim (0 → -1) and a request's use (n → n+1) exclude each other.
		var claimed []idle
		for _, v := range candidates {
			if len(claimed) == need {
				break
			}
			if v.s.busy.CompareAndSwap(0, -1) {
				claimed = append(claimed, v)
			}
		}
		if len(claimed) < need {
			for _, v := range claimed {
				v.s.busy.Store(0)
			}
			return nil, false
		}
		for _, v := range claimed {
			c.open.Delete(v.id)
			c.n--
			victims = append(victims, v.s.ss)
		}
	}
	c.pending++
	return victims, true
}

// created ends a reservation. id is the session the request created, or
// "" if it created none (a failed initialize, or a request that was not
// one); the session is counted until it ends.
func (c *sessionCap) created(id string) {
	var ss *mcp.ServerSession
	if id != "" {
		for s := range c.server.Sessions() {
			if s.ID() == id {
				ss = s
				break
			}
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending--
	if ss == nil {
		// No session, or it ended already (the SDK closes a session
		// whose initialize failed before the request returns).
		if id != "" {
			c.askingIDs.Delete(id)
		}
		return
	}
	entry := c.add(id, ss)
	c.n++
	go func() {
		// Forget the session when it ends, however it ends: DELETE, the
		// idle timeout, eviction or shutdown.
		_ = ss.Wait()
		c.forget(id, entry)
	}()
}

// forget drops the session id, whose entry is entry, once it has ended;
// a second call for the same entry does nothing more.
func (c *sessionCap) forget(id string, entry *capSession) {
	c.askingIDs.Delete(id)
	if c.ended != nil {
		c.ended(id)
	}
	c.mu.Lock()
	if c.open.CompareAndDelete(id, entry) {
		c.n--
	}
	c.mu.Unlock()
	entry.ended()
}

// statusSpy records the status a handler writes.
type statusSpy struct {
	http.ResponseWriter
	status int
}

func (w *statusSpy) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusSpy) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusSpy) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// add records the open session ss under id; c.mu is held.
func (c *sessionCap) add(id string, ss *mcp.ServerSession) *capSession {
	entry := &capSession{ss: ss}
	entry.direct.init(id, ss)
	entry.last.Store(capNow())
	if c.idle > 0 {
		// Armed once assigned: expire reads entry.timer.
		entry.timer = time.AfterFunc(math.MaxInt64, func() { c.expire(entry) })
		entry.timer.Reset(c.idle)
	}
	c.open.Store(id, entry)
	return entry
}

// ended releases what the session held once it has ended.
func (s *capSession) ended() {
	if s.timer != nil {
		s.timer.Stop()
	}
	s.direct.end()
}

// expire is the idle timer of session s. Requests do not touch the timer
// (they only record their time in last); when it fires, it closes the
// session if no request is in progress and none has started or ended for
// the idle timeout, and otherwise waits again for what remains of it. A
// request in progress counts as use for as long as it runs, as in the SDK.
func (c *sessionCap) expire(s *capSession) {
	if s.busy.Load() == 0 {
		if left := c.idle - time.Duration(capNow()-s.last.Load()); left > 0 {
			s.timer.Reset(left)
			return
		}
		// Claimed as eviction claims (0 → -1), so that a request that
		// takes the session at this moment and the close exclude each
		// other: the request then goes to the SDK, which answers 404.
		if s.busy.CompareAndSwap(0, -1) {
			s.ss.Close()
			return
		}
	}
	if s.busy.Load() >= 0 {
		s.timer.Reset(c.idle)
	}
}

// use marks the session id in use by a request; busy requests (POST,
// DELETE) keep it from eviction until they end, which done records. It
// returns nil for an unknown id, which is left to the SDK (it answers
// 404), and for a session being evicted.
func (c *sessionCap) use(id string, busy bool) *capSession {
	v, ok := c.open.Load(id)
	if !ok {
		return nil
	}
	s := v.(*capSession)
	if !busy {
		return s
	}
	for {
		b := s.busy.Load()
		if b < 0 {
			return nil
		}
		if s.busy.CompareAndSwap(b, b+1) {
			break
		}
	}
	s.last.Store(capNow())
	return s
}

// done ends a use of the session.
func (s *capSession) done(busy bool) {
	if busy {
		s.last.Store(capNow())
		s.busy.Add(-1)
	}
}

// rebindingProblem says why r looks like a DNS-rebinding or cross-site
// request, or returns "" if it does not.
func rebindingProblem(r *http.Request) string {
	if msg := trust.HostProblem(r); msg != "" {
		return msg
	}
	return trust.OriginProblem(r)
}

// RunHTTP serves handler on ln until ctx is done, then shuts down
// gracefully: it stops accepting, ends the open server-to-client event
// streams (GET requests, which would otherwise never finish), gives
// in-flight requests up to opts.ShutdownGrace before closing what is left,
// and finally closes every MCP session. It returns nil after a shutdown
// that ctx asked for, and the serving error otherwise.
//
// While serving, it bounds how long a client may take to send a request
// and how long a connection may stay idle, and how many connections are
// open at once (see RunOptions; nil means the defaults).
func RunHTTP(ctx context.Context, ln net.Listener, handler *HTTPHandler, opts *RunOptions) error {
	if opts == nil {
		opts = &RunOptions{}
	}
	grace := opts.ShutdownGrace
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	bodyTimeout := timeoutOr(opts.BodyReadTimeout, DefaultBodyReadTimeout)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	addr := ln.Addr()
	limit := max(cmp.Or(opts.MaxConnections, DefaultMaxConnections), 0)
	perAddr := max(cmp.Or(opts.MaxConnectionsPerAddress, DefaultMaxConnectionsPerAddress), 0)
	if limit > 0 || perAddr > 0 {
		ln = newLimitListener(ln, limit, perAddr, opts.PerAddressOnLoopback, logger)
	}
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				rctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				stop := context.AfterFunc(streams, cancel)
				defer stop()
				r = r.WithContext(rctx)
			} else if bodyTimeout > 0 && r.Body != nil && r.Body != http.NoBody {
				r.Body = newDeadlineBody(w, r.Body, bodyTimeout)
			}
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: timeoutOr(opts.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		IdleTimeout:       timeoutOr(opts.IdleTimeout, DefaultIdleTimeout),
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(endStreams)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		handler.CloseSessions()
		return fmt.Errorf("HTTP server on %s stopped: %w", addr, err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("requests still running after the shutdown grace period were cut off", "err", err)
		srv.Close()
	}
	handler.CloseSessions()
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("HTTP server on %s: %w", addr, err)
	}
	return nil
}

// timeoutOr returns d, or def if d is 0; a negative d means no timeout,
// which the http.Server and newDeadlineBody write as 0.
func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// deadlineBody is a request body that must be read within a deadline.
// The http.Server's own ReadTimeout cannot do this: it covers every
// request, the GET event stream included, and once it passes, the server
// cancels the request, ending the stream. So each request with a body
// gets its own read deadline, lifted as soon as the body has been read:
// after that the connection is only watched for the client going away,
// and the tool call may take as long as it needs.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

// newDeadlineBody sets a read deadline of timeout from now on the
// connection of w and returns body, which lifts it at its end. If the
// connection cannot take a deadline (a ResponseWriter that is not the
// server's), body is returned as it is.
func newDeadlineBody(w http.ResponseWriter, body io.ReadCloser, timeout time.Duration) io.ReadCloser {
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
		return body
	}
	return &deadlineBody{ReadCloser: body, rc: rc}
}

// Read reads the body and lifts the deadline at its end. After a failure
// (the deadline passing among them) the deadline stays: the server may
// try to read the rest of the body before it answers, and that must fail
// at once too.
func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}

// limitListener is a listener that keeps at most max accepted connections
// open, and at most perAddr from one client address (an IPv6 /64 counts as
// one address), before any request is read, so before authentication. A
// connection beyond either bound is answered 503 at once and closed: left
// in the kernel's listen queue, as it used to be, it waited silently until
// the client gave up, and a thousand idle sockets from one address kept
// every other client out.
type limitListener struct {
	net.Listener
	max, perAddr int
	loopback     bool // perAddr applies to loopback clients too
	logger       *slog.Logger

	mu     sync.Mutex
	open   int
	byAddr map[string]int
	// refusing bounds the goroutines answering refused connections.
	refusing chan struct{}
	warned   time.Time
}

// maxRefusing bounds the refused connections being answered at once;
// beyond it a refused connection is closed without an answer.
const maxRefusing = 64

func newLimitListener(ln net.Listener, max, perAddr int, loopback bool, logger *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, max: max, perAddr: perAddr, loopback: loopback, logger: logger,
		byAddr: map[string]int{}, refusing: make(chan struct{}, maxRefusing)}
}

// Accept returns the next connection within the bounds, answering 503 to
// those beyond them on the way.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key := addrKey(c.RemoteAddr())
		l.mu.Lock()
		why := ""
		switch {
		case l.max > 0 && l.open >= l.max:
			why = fmt.Sprintf("the server already has %d connections open", l.open)
		case l.perAddr > 0 && l.byAddr[key] >= l.perAddr && (l.loopback || !isLoopbackAddr(c.RemoteAddr())):
			why = fmt.Sprintf("your address already has %d connections open", l.byAddr[key])
		}
		if why == "" {
			l.open++
			l.byAddr[key]++
			l.mu.Unlock()
			return &limitedConn{Conn: c, release: func() { l.release(key) }}, nil
		}
		warn := time.Since(l.warned) > 10*time.Second
		if warn {
			l.warned = time.Now()
		}
		l.mu.Unlock()
		if warn {
			l.logger.Warn("refusing connections over the limit (503); this is logged at most every 10s", "remote", key, "reason", why)
		}
		l.refuse(c, why)
	}
}

// release frees the slots of a closed connection from key.
func (l *limitListener) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.byAddr[key]--; l.byAddr[key] <= 0 {
		delete(l.byAddr, key)
	}
}

// refuse answers a connection 503 and closes it. The answer is written
// before the request is read; the connection is then half-closed and what
// the client sends is read for a moment, so that closing does not reset
// the connection before the client has read the answer.
func (l *limitListener) refuse(c net.Conn, why string) {
	select {
	case l.refusing <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.refusing }()
		defer c.Close()
		body := "Service Unavailable: " + why + "; try again shortly\n"
		_ = c.SetDeadline(time.Now().Add(time.Second))
		_, err := io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"+body)
		if err != nil {
			return
		}
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// addrKey is the client address a connection counts against: its IP, or
// the /64 of an IPv6 address, since one host commonly holds a whole /64.
func addrKey(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return a.String()
	}
	ip := ap.Addr().Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// isLoopbackAddr reports whether a is a loopback address (127.0.0.0/8, ::1).
func isLoopbackAddr(a net.Addr) bool {
	ap, err := netip.ParseAddrPort(a.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// limitedConn is a connection of a limitListener.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

// Close closes the connection and frees its slot, once.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
