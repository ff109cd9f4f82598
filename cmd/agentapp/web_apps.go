package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentapp/agentapp/internal/trust"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/web"
)

// listenSandbox opens the listener of the MCP Apps views' sandbox and
// works out its origin: --sandbox-origin, else http:// and the listener's
// address; pageAddr is the page's listener, whose origin it must not be.
// "off" opens nothing and turns views off.
func listenSandbox(f *webFlags, pageAddr string) (net.Listener, string, error) {
	if strings.EqualFold(strings.TrimSpace(f.sandboxOrigin), "off") {
		return nil, "", nil
	}
	if f.sandboxOrigin != "" {
		if err := web.CheckSandboxOrigin(f.sandboxOrigin); err != nil {
			return nil, "", usageError("--sandbox-origin: %v", err)
		}
	}
	if f.sandboxAddr == f.http && !strings.HasSuffix(f.http, ":0") {
		return nil, "", usageError("--sandbox-addr %s is the page's address; the views' sandbox needs another origin, e.g. another port", f.sandboxAddr)
	}
	ln, err := net.Listen("tcp", f.sandboxAddr)
	if err != nil {
		return nil, "", fmt.Errorf("cannot listen on %s for the views' sandbox: %w (try another --sandbox-addr, or port 0 for a free one)", f.sandboxAddr, err)
	}
	origin := strings.TrimSuffix(f.sandboxOrigin, "/")
	if origin == "" {
		origin = "http://" + ln.Addr().String()
	}
	if page := "http://" + pageAddr; strings.EqualFold(origin, page) {
		ln.Close()
		return nil, "", usageError("--sandbox-origin %s is the page's origin; views must run on another origin (another host name or port)", origin)
	}
	return ln, origin, nil
}

// sandboxWarning says why browsers on other machines would not show the
// views: the page is reachable from them, its sandbox's origin is a
// loopback address of this machine. Empty when there is nothing to say.
func sandboxWarning(httpAddr, origin string) string {
	if origin == "" || isLoopbackAddr(httpAddr) {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || !isLoopbackAddr(u.Host) {
		return ""
	}
	return fmt.Sprintf("--http %s is reachable from other machines, but the MCP Apps views' sandbox is at %s, which only this machine reaches; set --sandbox-addr and --sandbox-origin (e.g. a second host name behind your proxy) or --sandbox-origin off", httpAddr, origin)
}

// isLoopbackAddr reports whether HOST:PORT names a loopback host.
func isLoopbackAddr(addr string) bool { return trust.IsLoopbackAddr(addr) }

// webConnectOptions are the MCP clients' options of the web host: with
// views on, they advertise MCP Apps (the terminal and serve do not).
func webConnectOptions(apps bool, opts ...mcpclient.ConnectOption) []mcpclient.ConnectOption {
	if apps {
		opts = append(opts, mcpclient.WithApps())
	}
	return opts
}

// serveSandbox serves the views' proxy on ln until the returned function
// is called, which stops it within a bound.
func serveSandbox(srv *web.Server, ln net.Listener, logger *slog.Logger) func() {
	hs := &http.Server{
		Handler:           srv.SandboxHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("the views' sandbox stopped: " + err.Error())
		}
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(ctx); err != nil {
			_ = hs.Close()
		}
		<-done
	}
}
