package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/mcpclient/internal/relisten"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
)

// httpDialRetries is how often a request that could not reach an HTTP
// server (connection refused, DNS failure, nothing listening yet) is sent
// again, after httpRetryBase, then twice that, and so on.
const (
	httpDialRetries = 3
	httpRetryBase   = 200 * time.Millisecond
	// httpDeleteTimeout bounds the DELETE that ends a session: a courtesy
	// to the server, which one that is stuck (in a request it never
	// answers, say) must not turn into seconds of waiting on close.
	httpDeleteTimeout = time.Second
)

// headerTransport adds the configured headers and bearer token to every
// request to a streamable HTTP server, remembers a 401 so the error the
// user sees can say what to fix, retries requests that never reached the
// server, bounds the responses, and captures the raw tools/list bytes.
type headerTransport struct {
	base    http.RoundTripper
	server  string
	headers map[string]string
	token   string
	// maxBody bounds a response body that is not an event stream (the
	// SDK reads those whole); the SDK bounds each event of a stream.
	maxBody int
	// capture receives the tools/list answers byte for byte. It is done
	// here rather than by wrapping the SDK's connection, because the SDK
	// opens its standalone SSE stream (the one notifications such as
	// tools/list_changed travel on) only on a connection of its own type.
	capture *capture
	// sleep waits between retries; tests replace it.
	sleep        func(ctx context.Context, d time.Duration) error
	unauthorized atomic.Bool
	// firstPost is the status of the first initialize POST's answer: a
	// legacy SSE server refuses it with 404, 405 or 400. (The SDK's
	// server/discover probe before it gets a 400 from many current
	// servers too, so its answer says nothing.)
	firstPost atomic.Int32
	// oauth: the SDK's OAuth handler logs in on a 401, so explain has
	// other advice.
	oauth bool
	log   *slog.Logger
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	var msg rpcRequest
	if req.Method == http.MethodPost {
		msg = peekRequest(req)
		tasks.RenameCallHTTP(req, msg.Method)
	}
	stop := func() {}
	if req.Method == http.MethodDelete {
		ctx, cancel := context.WithTimeout(req.Context(), httpDeleteTimeout)
		req, stop = req.WithContext(ctx), cancel
	}
	resp, err := t.send(req)
	if err != nil {
		stop()
		return nil, err
	}
	if req.Method == http.MethodDelete {
		resp.Body = &stopOnClose{ReadCloser: resp.Body, stop: stop}
	}
	if resp.StatusCode == http.StatusUnauthorized {
		t.unauthorized.Store(true)
	}
	if msg.Method == "initialize" {
		t.firstPost.CompareAndSwap(0, int32(resp.StatusCode))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sse := mt == "text/event-stream"
	if !sse && resp.Body != nil && resp.Body != http.NoBody {
		ok := resp.StatusCode/100 == 2 && mt == "application/json"
		resp.Body = &boundedBody{src: resp.Body, t: t, size: resp.ContentLength, id: msg.ID, answer: ok && msg.ID != nil}
	}
	if msg.Method == "subscriptions/listen" && sse && resp.StatusCode == http.StatusOK {
		resp.Body = relisten.Request(req, resp.Body, t.send, t.server, t.log)
	}
	if (msg.Method == "tools/list" || msg.Method == "initialize") && resp.StatusCode == http.StatusOK {
		resp.Body = &captureBody{ReadCloser: resp.Body, cap: t.capture, sse: sse}
	}
	return resp, err
}

// stopOnClose releases a request's context once its body is closed.
type stopOnClose struct {
	io.ReadCloser
	stop func()
}

func (b *stopOnClose) Close() error {
	defer b.stop()
	return b.ReadCloser.Close()
}

// boundedBody reads a response body that is not an event stream whole,
// up to the transport's maxBody, before handing it on: the SDK reads such
// a body whole, and a server could otherwise make it read gigabytes. An
// answer over the limit is replaced by a JSON-RPC error response to the
// request, so that the call fails at once with the reason while the
// session lives on (the SDK would take a body it failed to read for a
// broken connection); any other body over the limit reads as an error.
type boundedBody struct {
	src    io.ReadCloser
	t      *headerTransport
	size   int64           // Content-Length, -1 when unknown
	id     json.RawMessage // the request's id
	answer bool            // a JSON-RPC answer to the request is expected

	read bool
	buf  *bytes.Reader
	err  error
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.fill()
	}
	if b.buf != nil && b.buf.Len() > 0 {
		return b.buf.Read(p)
	}
	if b.err != nil {
		return 0, b.err
	}
	return 0, io.EOF
}

func (b *boundedBody) fill() {
	limit := int64(b.t.maxBody)
	if b.size <= limit {
		data, err := io.ReadAll(io.LimitReader(b.src, limit+1))
		if int64(len(data)) <= limit {
			b.buf, b.err = bytes.NewReader(data), err
			return
		}
	}
	_ = b.src.Close()
	size := fmt.Sprintf("more than %d bytes", limit)
	if b.size > limit {
		size = fmt.Sprintf("%d bytes", b.size)
	}
	msg := fmt.Sprintf("server %s sent a response of %s, over the %d-byte limit; it was refused (ask for less data, e.g. a smaller page or range)", b.t.server, size, limit)
	if !b.answer {
		b.err = errors.New(msg)
		return
	}
	m, _ := json.Marshal(msg)
	b.buf = bytes.NewReader(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, b.id, m))
}

func (b *boundedBody) Close() error { return b.src.Close() }

// send sends req, and sends it again (with backoff) while it fails before
// reaching the server. Such a retry is safe whatever the request: the
// server never saw the first attempt. Failures after the request was sent
// are not retried here; the bridge decides (only read-only tools).
func (t *headerTransport) send(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := t.base.RoundTrip(req)
		if err == nil || attempt >= httpDialRetries || !notDelivered(err) {
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req.Body = body
		}
		if serr := t.sleep(req.Context(), httpRetryBase<<attempt); serr != nil {
			return nil, err
		}
	}
}

// notDelivered reports whether err says the request never reached the
// server: the connection could not be made.
func notDelivered(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED)
}

// rpcRequest is what the transport needs to know of a request it sends.
type rpcRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// peekRequest reads the method and id of a POST body (a JSON-RPC message
// the SDK encoded) without consuming it; both are empty when the body is
// not one.
func peekRequest(req *http.Request) rpcRequest {
	var msg rpcRequest
	if req.GetBody == nil {
		return msg
	}
	body, err := req.GetBody()
	if err != nil {
		return msg
	}
	defer body.Close()
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&msg) != nil {
		return rpcRequest{}
	}
	if len(msg.ID) == 0 || string(msg.ID) == "null" {
		msg.ID = nil
	}
	return msg
}

// captureBody passes a tools/list answer through to the SDK and records its
// tools' raw schemas on the way. Each message is recorded inside the Read
// that completes it, so the record exists before the SDK can have decoded
// the message and handed it to the bridge.
type captureBody struct {
	io.ReadCloser
	cap  *capture
	sse  bool
	buf  []byte // JSON: the whole body so far; SSE: the unfinished line
	data []byte // SSE: the data lines of the current event
	done bool
}

const captureLimit = 64 << 20

func (b *captureBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.done || n == 0 && err == nil {
		return n, err
	}
	b.buf = append(b.buf, p[:n]...)
	if len(b.buf) > captureLimit {
		b.done, b.buf = true, nil // too big to keep; the SDK's schemas are used
		return n, err
	}
	if !b.sse {
		// A JSON body is complete at its end, or once it parses; only a
		// buffer that ends like an object is worth parsing, so that a big
		// body read in many pieces is not parsed once per piece.
		if err != nil || endsObject(b.buf) && json.Valid(b.buf) {
			b.record(b.buf)
			b.done = true
		}
		return n, err
	}
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(b.buf[:i], "\r")
		b.buf = b.buf[i+1:]
		switch {
		case len(line) == 0:
			if len(b.data) > 0 {
				b.record(b.data)
				b.data = b.data[:0]
			}
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(line[5:], []byte(" "))
			if len(b.data) > 0 {
				b.data = append(b.data, '\n')
			}
			b.data = append(b.data, d...)
		}
	}
	return n, err
}

func endsObject(b []byte) bool {
	b = bytes.TrimRight(b, " \t\r\n")
	return len(b) > 0 && b[len(b)-1] == '}'
}

// record stores the tools of a JSON-RPC response message.
func (b *captureBody) record(msg []byte) {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(msg, &m) == nil && len(m.Result) > 0 {
		b.cap.recordTools(m.Result)
		b.cap.recordInit(m.Result)
	}
}

// CloseIdleConnections closes the base transport's idle connections (the
// http.Client forwards its own CloseIdleConnections here).
func (t *headerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// explain rewrites an error of a request to the server when the server
// answered 401, which the SDK reports only as a generic failure.
func (t *headerTransport) explain(err error) error {
	if err == nil || !t.unauthorized.Load() {
		return err
	}
	what := `no bearer token was sent; add "headers": {"Authorization": "Bearer ${TOKEN}"} to the server in the config (agentapp mcp takes --token or AGENTAPP_MCP_TOKEN)`
	switch {
	case t.oauth:
		what = `no bearer token was sent, and logging in with OAuth did not give access (the cause is at the end); if the server takes a static token instead, add "headers": {"Authorization": "Bearer ${TOKEN}"} to the server in the config`
	case t.token != "" || t.headers["Authorization"] != "":
		what = "the bearer token was refused; check that it is the right one and not expired"
	}
	return fmt.Errorf("the server answered 401 Unauthorized: %s (%w)", what, err)
}

// newHTTPClient returns a client of its own for one session: its idle
// connections are closed with the session instead of lingering in the
// shared default transport.
func newHTTPClient(cfg *mcpconfig.Server, o *connectOptions) (*http.Client, *headerTransport) {
	var base http.RoundTripper = http.DefaultTransport.(*http.Transport).Clone()
	if o.httpBase != nil {
		base = o.httpBase
	}
	ht := &headerTransport{base: base, server: cfg.Name, headers: cfg.Headers, token: cfg.Token, maxBody: o.maxFrame, capture: newCapture(), sleep: o.restart.Sleep, log: o.logger}
	return &http.Client{Transport: ht}, ht
}
