package agentmcp

import (
	"context"
	"io"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultDrainTimeout bounds how long a server connection holds back the end
// of its input while requests are still being answered.
const DefaultDrainTimeout = 30 * time.Second

// StdioServerTransport returns the transport `agentapp serve` speaks on
// stdin/stdout: a ServerIOTransport (newline-delimited JSON-RPC, decoded
// without the SDK's per-message decoder, malformed lines answered with an
// error instead of ending the session), with the end of input held back
// until every request read has been answered. direct, when not nil,
// answers plain tools/call requests without the SDK (see DirectCalls); it
// must come from the same ServerOptions as the server. Close closes
// stdin, never stdout, which the process may still use to report how it
// ended.
func StdioServerTransport(direct *DirectCalls) mcp.Transport {
	return &DrainingTransport{Transport: &ServerIOTransport{Reader: pollableStdin(), Writer: nopWriteCloser{os.Stdout}, Direct: direct}}
}

// nopWriteCloser is a writer whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// DrainingTransport wraps a server transport so that the end of the client's
// input does not cut off answers still being computed.
//
// The SDK ends a session as soon as a read fails, cancelling the requests in
// flight; a client that writes its requests and closes its end at once (a
// shell pipeline such as `printf … | agentapp serve`, or a batch driver)
// then gets no answer to its last requests. DrainingTransport delays the
// read error until every request read so far has been answered, or until
// Timeout passes.
type DrainingTransport struct {
	Transport mcp.Transport
	// Timeout bounds the wait; 0 means DefaultDrainTimeout.
	Timeout time.Duration
}

// Connect implements mcp.Transport.
func (t *DrainingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultDrainTimeout
	}
	return &drainingConn{Connection: conn, timeout: timeout, pending: map[any]bool{}, closed: make(chan struct{})}, nil
}

type drainingConn struct {
	mcp.Connection
	timeout time.Duration

	mu      sync.Mutex
	pending map[any]bool  // ids of requests read and not yet answered
	idle    chan struct{} // closed when pending becomes empty; nil while no one waits
	closed  chan struct{}
	once    sync.Once
}

func (c *drainingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.mu.Lock()
			c.pending[req.ID.Raw()] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	c.mu.Lock()
	var wait chan struct{}
	if len(c.pending) > 0 {
		c.idle = make(chan struct{})
		wait = c.idle
	}
	c.mu.Unlock()
	if wait != nil {
		timer := time.NewTimer(c.timeout)
		defer timer.Stop()
		select {
		case <-wait:
		case <-timer.C:
		case <-ctx.Done():
		case <-c.closed:
		}
	}
	return nil, err
}

func (c *drainingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID.Raw())
		if len(c.pending) == 0 && c.idle != nil {
			close(c.idle)
			c.idle = nil
		}
		c.mu.Unlock()
	}
	return err
}

func (c *drainingConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Connection.Close()
}
