// Command gosdkfloor is the least an MCP server on the official Go SDK
// can do over streamable HTTP: one tool shaped like agentapp's
// getOrderStatus (an orderId in, {orderId, status, eta} out, with an
// outputSchema and structuredContent), answered from a map, on the SDK's
// own handler with nothing in front of it. bench/compare.sh measures
// `agentapp serve --http` against it: the difference is what agentapp
// adds (its guards, its handler's checks, SQLite) to the SDK it runs on.
//
//	gosdkfloor [--addr 127.0.0.1:0] [--stateless]
//
// It prints "listening on http://ADDR/mcp" on stderr once it accepts
// connections, and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type orderIn struct {
	OrderID string `json:"orderId" jsonschema:"the order number, e.g. A-1024"`
}

type orderOut struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
	ETA     string `json:"eta"`
}

// orders are the answers, fixed: the floor does no I/O.
var orders = map[string]orderOut{
	"A-1024": {OrderID: "A-1024", Status: "已发货", ETA: "2026-12-03"},
	"A-2048": {OrderID: "A-2048", Status: "待发货", ETA: "2026-12-05"},
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdkfloor", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "getOrderStatus", Description: "Look up an order's shipping status by its number."},
		func(_ context.Context, _ *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, orderOut, error) {
			o, ok := orders[in.OrderID]
			if !ok {
				return nil, orderOut{}, fmt.Errorf("no order %q", in.OrderID)
			}
			return nil, o, nil
		})
	return s
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	stateless := flag.Bool("stateless", false, "keep no session between requests")
	flag.Parse()
	if err := run(*addr, *stateless); err != nil {
		fmt.Fprintln(os.Stderr, "gosdkfloor:", err)
		os.Exit(1)
	}
}

func run(addr string, stateless bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	server := newServer()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: stateless, SessionTimeout: 5 * time.Minute})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
