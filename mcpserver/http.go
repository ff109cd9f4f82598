package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is the endpoint of the streamable HTTP transport.
const HTTPPath = "/mcp"

// DefaultShutdownGrace is how long RunHTTP lets in-flight requests finish
// after it is told to stop.
const DefaultShutdownGrace = 5 * time.Second

// HTTPOptions configure NewHTTPHandler; nil means the defaults.
type HTTPOptions struct {
	// Token, when not empty, is the bearer token every request must carry
	// ("Authorization: Bearer <token>").
	Token string
	// Logger receives transport activity; nil discards. Never stdout.
	Logger *slog.Logger
}

// ResolveHTTPAddr checks and completes the address given to
// `agentapp serve --http`. A missing host means loopback (":8080" and
// "8080" both become "127.0.0.1:8080"): the server is for local clients
// unless told otherwise. Any address that is not loopback needs a bearer
// token, because everyone who can reach it could otherwise call the tools
// and read the documents; without one, ResolveHTTPAddr refuses.
func ResolveHTTPAddr(addr, token string) (string, error) {
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
	if host == "" {
		host = "127.0.0.1"
	}
	if !isLoopbackHost(host) && token == "" {
		return "", fmt.Errorf("refusing to serve on %s without a bearer token: every machine that can reach it could call the tools and read the documents. "+
			"Set --token or AGENTAPP_SERVER_TOKEN, or bind a loopback address such as 127.0.0.1:%s", net.JoinHostPort(host, port), port)
	}
	return net.JoinHostPort(host, port), nil
}

// isLoopbackHost reports whether host (a name or an IP, without port or
// brackets) is "localhost" or a loopback address.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// hostOnly returns the host part of a Host header value ("[::1]:80" →
// "::1").
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
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
func NewHTTPHandler(server *Server, opts *HTTPOptions) *HTTPHandler {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server.mcp }, &mcp.StreamableHTTPOptions{
		Logger: logger,
		// A client that goes away without ending its session (DELETE)
		// would otherwise hold its state for the server's lifetime.
		SessionTimeout: SessionIdleTimeout,
	})
	var wantSum [32]byte
	if opts.Token != "" {
		wantSum = sha256.Sum256([]byte(opts.Token))
	}
	mux := http.NewServeMux()
	mux.HandleFunc(HTTPPath, func(w http.ResponseWriter, r *http.Request) {
		if msg := rebindingProblem(r); msg != "" {
			logger.Warn("refused a request with a foreign Host or Origin", "host", r.Host, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: "+msg, http.StatusForbidden)
			return
		}
		if opts.Token != "" && !bearerMatches(r.Header.Get("Authorization"), wantSum) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentapp"`)
			http.Error(w, "Unauthorized: send the header \"Authorization: Bearer <token>\" with the token the server was started with (--token or AGENTAPP_SERVER_TOKEN)", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "Not Found: the MCP endpoint is "+HTTPPath, http.StatusNotFound)
	})
	return &HTTPHandler{mux: mux, server: server.mcp}
}

// SessionIdleTimeout is how long an HTTP session may go without a request
// before the server forgets it. A client that comes back later gets 404
// for the old session and, as the protocol prescribes, starts a new one.
const SessionIdleTimeout = 30 * time.Minute

// HTTPHandler is the MCP endpoint built by NewHTTPHandler.
type HTTPHandler struct {
	mux    *http.ServeMux
	server *mcp.Server
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

// rebindingProblem says why r looks like a DNS-rebinding or cross-site
// request, or returns "" if it does not.
func rebindingProblem(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	onLoopback := local != nil && isLoopbackHost(hostOnly(local.String()))
	if onLoopback && !isLoopbackHost(hostOnly(r.Host)) {
		return fmt.Sprintf("Host %q is not a loopback name; this server only answers requests addressed to localhost, 127.0.0.1 or [::1]", r.Host)
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "" // not a browser request
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Sprintf("Origin %q is not allowed", origin)
	}
	if isLoopbackHost(u.Hostname()) || strings.EqualFold(u.Host, r.Host) {
		return ""
	}
	return fmt.Sprintf("Origin %q is not allowed; only pages served from localhost or from this server may call it", origin)
}

// bearerMatches reports whether an Authorization header carries the token
// whose SHA-256 is want. Comparing fixed-size digests in constant time
// leaks neither the token's bytes nor its length through timing.
func bearerMatches(header string, want [32]byte) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// RunHTTP serves handler on ln until ctx is done, then shuts down
// gracefully: it stops accepting, ends the open server-to-client event
// streams (GET requests, which would otherwise never finish), and gives
// in-flight requests up to grace (0 means DefaultShutdownGrace) before
// closing what is left, and finally closes every MCP session. It returns nil after a shutdown that ctx asked
// for, and the serving error otherwise.
func RunHTTP(ctx context.Context, ln net.Listener, handler *HTTPHandler, grace time.Duration, logger *slog.Logger) error {
	if grace <= 0 {
		grace = DefaultShutdownGrace
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
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
			}
			handler.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(endStreams)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		handler.CloseSessions()
		return fmt.Errorf("HTTP server on %s stopped: %w", ln.Addr(), err)
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
		return fmt.Errorf("HTTP server on %s: %w", ln.Addr(), err)
	}
	return nil
}
