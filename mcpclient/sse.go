package mcpclient

import (
	"context"
	"fmt"

	"github.com/agentapp/agentapp/mcpclient/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"
)

// dialSSE connects with the legacy HTTP+SSE transport (protocol version
// 2024-11-05): a GET opens the event stream, whose first event names the
// URL to POST messages to. Headers, the bearer token and OAuth logins
// work as for streamable HTTP; tokens is the login of the streamable
// attempt before this one, nil when there was none.
func (b *Bridge) dialSSE(ctx context.Context, tokens oauth2.TokenSource) (*conn, toolList, error) {
	timeout := b.connectTimeout()
	ctx, clock := oauth.NewClock(ctx, timeout)
	defer clock.Stop()
	hc, ht := newHTTPClient(&b.cfg, b.opts)
	flow, err := b.loginFlow(ht, clock, tokens)
	if err == nil && flow != nil {
		// The SDK's SSE client takes no OAuth handler: the login is done
		// by the HTTP client it is given.
		ot, terr := oauth.NewTransport(ht, flow)
		if terr != nil {
			flow.Close()
		} else {
			hc.Transport = ot
		}
		err = terr
	}
	if err != nil {
		hc.CloseIdleConnections()
		return nil, toolList{}, &ConnectError{Server: b.name, Err: err, msg: safeText(err)}
	}
	c := newHTTPConn(hc, ht, flow)
	t := &mcp.SSEClientTransport{
		Endpoint:     b.cfg.URL,
		HTTPClient:   hc,
		MaxEventSize: b.opts.maxFrame,
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
		return &ConnectError{Server: b.name, Err: err,
			msg: fmt.Sprintf("connecting to MCP server %s (%s, legacy SSE transport) failed during %s: %s", b.name, b.cfg.URL, phase, safeText(err))}
	}
	if err := b.open(ctx, c, &detachedSSE{inner: t}, ""); err != nil {
		return nil, toolList{}, fail("initialize", err)
	}
	tools, err := b.listTools(ctx, c)
	if err != nil {
		return nil, toolList{}, fail("tools/list", err)
	}
	b.start(c)
	return c, tools, nil
}

// detachedSSE gives the SDK's SSE transport a stream that outlives the
// connect: the SDK opens the event stream with the context of Connect, and
// the connect timeout's context ends when the connect is done. The
// timeout still bounds opening the stream; the stream then lives until
// the connection is closed.
type detachedSSE struct{ inner *mcp.SSEClientTransport }

func (d *detachedSSE) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := d.inner.Connect(life)
	if !stop() || err != nil {
		cancel()
		if err == nil {
			_ = conn.Close()
			err = ctx.Err()
		}
		return nil, err
	}
	return &cancelOnClose{Connection: conn, cancel: cancel}, nil
}

type cancelOnClose struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	defer c.cancel()
	return c.Connection.Close()
}
