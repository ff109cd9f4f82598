// Command everything is the fixture the official MCP conformance suite
// (@modelcontextprotocol/conformance, "server" mode) is run against: the
// suite's test tools, resources and prompts, served by agentapp's own
// server code (mcpserver) with what `agentapp serve` serves beside them
// (its tools, documents, refund tasks and skills, on a store of its own), through
// the same options, HTTP handler and stdio transport.
//
//	everything --http 127.0.0.1:0   # endpoint /mcp; prints its URL on stderr
//	everything                      # stdio
//
// The features are described by the suite's scenarios; the code is ours.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/skills"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "everything:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("everything", flag.ContinueOnError)
	addr := fs.String("http", "", "serve streamable HTTP on this loopback address (endpoint "+mcpserver.HTTPPath+"); stdio without it")
	dataDir := fs.String("data", "", "the store's directory (default: a fresh temporary one, removed at exit)")
	token := fs.String("token", "", "bearer token(s) HTTP requests must carry, as for agentapp serve")
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	dir := *dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "agentapp-conformance-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	server, closeStore, err := newServer(ctx, dir, logger)
	if err != nil {
		return err
	}
	defer closeStore()

	if *addr == "" {
		return server.ServeStdio(ctx)
	}
	hostport, err := mcpserver.ResolveHTTPAddr(*addr, *token)
	if err != nil {
		return err
	}
	if host, _, _ := net.SplitHostPort(hostport); !isLoopback(host) {
		return fmt.Errorf("--http %s: the fixture serves loopback addresses only", *addr)
	}
	ln, err := net.Listen("tcp", hostport)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "conformance fixture on http://%s%s\n", ln.Addr(), mcpserver.HTTPPath)
	handler := mcpserver.NewHTTPHandler(server, &mcpserver.HTTPOptions{Token: *token, Logger: logger})
	if *token != "" {
		return mcpserver.RunHTTP(ctx, ln, handler, &mcpserver.RunOptions{Logger: logger})
	}
	// The suite sends no bearer token, and a session-less request without
	// one has no caller to own a task (agentapp's rule): the fixture
	// stands the suite in as one caller.
	srv := &http.Server{Handler: oneCaller(handler), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err = srv.Serve(ln)
	handler.CloseSessions()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// oneCaller gives every request without a bearer token the same one.
func oneCaller(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer conformance-suite")
		}
		next.ServeHTTP(w, r)
	})
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// newServer opens a store in dir and builds the server: agentapp serve's
// options (assistant.ServerOptions) with the suite's features added.
func newServer(ctx context.Context, dir string, logger *slog.Logger) (*mcpserver.Server, func(), error) {
	st, err := store.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	svc, err := support.New(ctx, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	k, err := kb.Open(ctx, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	if err := k.SeedDemo(ctx); err != nil {
		st.Close()
		return nil, nil, err
	}
	opts := assistant.ServerOptions(svc, k, "conformance")
	opts.Logger = logger
	if opts.StateKey, err = st.Secret(ctx, "mcp-request-state"); err != nil {
		st.Close()
		return nil, nil, err
	}
	// The playbooks `agentapp serve` publishes by default; each has a
	// references folder, a subdirectory for the directory scenario.
	folder, skipped, err := skills.Load(support.Playbooks())
	if err == nil && len(skipped) > 0 {
		err = errors.Join(skipped...)
	}
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	opts.Skills = folder
	addFixtures(opts)
	return mcpserver.New(opts), func() { st.Close() }, nil
}
