// Command everything is the fixture the official MCP conformance suite
// (@modelcontextprotocol/conformance, "server" mode) is run against: the
// suite's test tools, resources and prompts, served by agentapp's own
// server code (mcpserver) with what `agentapp serve` serves beside them
// (its tools, documents and refund tasks, on a store of its own), through
// the same options, HTTP handler and stdio transport.
//
//	everything --http 127.0.0.1:0   # endpoint /mcp; prints its URL on stderr
//	everything                      # stdio
//
// The features are described by the suite's scenarios; the code is ours.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
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
	return mcpserver.RunHTTP(ctx, ln, handler, &mcpserver.RunOptions{Logger: logger})
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
	addFixtures(opts)
	return mcpserver.New(opts), func() { st.Close() }, nil
}
