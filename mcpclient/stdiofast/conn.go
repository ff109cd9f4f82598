package stdiofast

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport is the client side of a stdio server: the messages its
// frame filter decoded, and ours written one per line to its stdin.
//
// It replaces the SDK's IOTransport on this path. That transport decodes
// every line again with the SDK's JSON decoder (once trying it as a batch,
// once as a message), which allocates and clears a 32 KiB buffer each
// time, and passes each line through one more goroutine; on a tool call
// that was half of the bytes the host allocated and one of its thread
// wake-ups (bench/NOTES.md). The filter has already checked each line and
// decodes it with rpcwire, which builds the messages the SDK's decoder
// would (a differential fuzz test holds it to that).
//
// Batches, which servers may send only under protocol versions before
// 2025-06-18, are taken message by message, and answers to the requests in
// one are written one by one rather than as an array.
type Transport struct {
	frames *supervise.FrameFilter
	stdin  io.WriteCloser
	conn   *Conn // the connection made, for the direct tools/call path
}

// NewTransport is the transport of a stdio server whose stdout frames
// reads and whose stdin is stdin.
func NewTransport(frames *supervise.FrameFilter, stdin io.WriteCloser) *Transport {
	return &Transport{frames: frames, stdin: stdin}
}

// Conn is the connection Connect made, nil before.
func (t *Transport) Conn() *Conn { return t.conn }

func (t *Transport) Connect(context.Context) (mcp.Connection, error) {
	t.conn = &Conn{frames: t.frames, stdin: t.stdin, closed: make(chan struct{})}
	return t.conn, nil
}

type Conn struct {
	frames *supervise.FrameFilter
	queue  []jsonrpc.Message // the rest of a batch; Read's own
	direct directCalls       // the bridge's own tools/call (direct.go)
	meta   sessionMeta       // a 2026-07-28 session's _meta (modern.go)

	writeMu sync.Mutex
	stdin   io.WriteCloser
	wbuf    []byte

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

// Read implements mcp.Connection. Close unblocks it: closing the pipe ends
// the filter's read. The answers to the bridge's direct calls are handed
// to their callers here and never reach the SDK; when reading ends, so do
// the direct calls waiting for an answer.
func (c *Conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.read(ctx)
		if err != nil {
			c.direct.end(err)
			return nil, err
		}
		if !c.direct.deliver(msg) {
			return msg, nil
		}
	}
}

func (c *Conn) read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	fr, err := c.frames.Next()
	if err != nil {
		return nil, err
	}
	c.queue = fr.Msgs[1:]
	return fr.Msgs[0], nil
}

// maxKeptWriteBuffer bounds the write buffer kept between messages, so
// that one large request does not stay allocated for the session.
const maxKeptWriteBuffer = 64 << 10

// Write implements mcp.Connection: one message and its newline in one
// write, as the SDK's transport writes them.
func (c *Conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("marshaling message: %w", err)
	}
	c.recordMeta(msg)
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return errors.New("the connection to the server is closed")
	default:
	}
	buf := append(append(c.wbuf[:0], data...), '\n')
	_, err = c.stdin.Write(buf)
	if cap(buf) <= maxKeptWriteBuffer {
		c.wbuf = buf
	} else {
		c.wbuf = nil
	}
	return err
}

// Close implements mcp.Connection: it closes the server's stdin (the first
// step of its close sequence) and our end of its stdout. It is idempotent.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = errors.Join(c.frames.Close(), c.stdin.Close())
	})
	return c.closeErr
}

// SessionID implements mcp.Connection; stdio has no session id.
func (c *Conn) SessionID() string { return "" }
