// Package relisten keeps a subscriptions/listen stream (MCP 2026-07-28) of
// a streamable HTTP server open for the SDK that asked for it.
//
// The Go SDK sends subscriptions/listen once, at connect, and never learns
// that its stream ended: a server restart or a proxy's idle timeout ends the
// HTTP response, the SDK drops the stream (it has no event id to resume
// from), and list changes stop arriving for the life of the session. Body
// stands in for the response body: when the stream ends it sends the same
// request again (with backoff, a bounded number of times) and goes on
// reading the new stream, so the SDK reads one long stream. Because
// notifications were missed in between, a reopened stream starts with the
// list_changed (and resources/updated) notifications the request asked for
// (after the server's acknowledgement of it), which makes the SDK drop its
// cached lists and the client list again.
package relisten

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"
)

// Policy bounds the reopening. The zero value takes the defaults.
type Policy struct {
	// First is the wait before the first reopen (default 250 ms); each
	// failure in a row doubles it, up to Max (default 30 s).
	First, Max time.Duration
	// Attempts is the most reopens in a row that fail, or whose stream
	// ends again within Stable, before the stream is given up (default 8).
	Attempts int
	// Stable is how long a stream must live for the count of failures
	// to start afresh (default 30 s).
	Stable time.Duration
}

func (p Policy) withDefaults() Policy {
	if p.First <= 0 {
		p.First = 250 * time.Millisecond
	}
	if p.Max <= 0 {
		p.Max = 30 * time.Second
	}
	if p.Attempts <= 0 {
		p.Attempts = 8
	}
	if p.Stable <= 0 {
		p.Stable = 30 * time.Second
	}
	return p
}

// maxPending bounds the unfinished event held back from the SDK; past it
// the bytes go through as they are (the SDK bounds each event itself).
const maxPending = 8 << 20

// Body is the body of a subscriptions/listen response, reopened when it ends.
type Body struct {
	ctx    context.Context
	reopen func(ctx context.Context) (*http.Response, error)
	log    *slog.Logger
	server string
	pol    Policy
	id     json.RawMessage // the listen request's id
	missed []byte          // the events a reopened stream starts with

	cur      io.ReadCloser
	since    time.Time // when cur was opened
	failures int
	pending  []byte // read from cur, not yet a whole event
	ready    []byte // whole events for the SDK
	done     bool
	reopened bool // missed goes out with the reopened stream's first event
}

// listenRequest is the part of a subscriptions/listen request Body reads.
type listenRequest struct {
	ID     json.RawMessage `json:"id"`
	Params struct {
		Notifications struct {
			Tools     bool     `json:"toolsListChanged"`
			Prompts   bool     `json:"promptsListChanged"`
			Resources bool     `json:"resourcesListChanged"`
			URIs      []string `json:"resourceSubscriptions"`
		} `json:"notifications"`
	} `json:"params"`
}

// Wrap returns body, the response body of the subscriptions/listen request
// encoded in reqBody, as a Body that calls reopen (which sends the request
// again within ctx) when it ends. A request it cannot read is left as it is.
func Wrap(ctx context.Context, server string, reqBody []byte, body io.ReadCloser, reopen func(context.Context) (*http.Response, error), log *slog.Logger, pol Policy) io.ReadCloser {
	var req listenRequest
	if json.Unmarshal(reqBody, &req) != nil || len(req.ID) == 0 {
		return body
	}
	if log == nil {
		log = slog.Default()
	}
	b := &Body{ctx: ctx, reopen: reopen, log: log, server: server, pol: pol.withDefaults(), id: req.ID, cur: body, since: time.Now()}
	n := req.Params.Notifications
	for _, m := range []struct {
		on     bool
		method string
	}{{n.Tools, "notifications/tools/list_changed"}, {n.Prompts, "notifications/prompts/list_changed"}, {n.Resources, "notifications/resources/list_changed"}} {
		if m.on {
			b.missed = append(b.missed, event(map[string]any{"jsonrpc": "2.0", "method": m.method})...)
		}
	}
	for _, uri := range n.URIs {
		b.missed = append(b.missed, event(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{"uri": uri}})...)
	}
	return b
}

func event(msg any) []byte {
	data, _ := json.Marshal(msg)
	return append(append([]byte("event: message\ndata: "), data...), "\n\n"...)
}

func (b *Body) Read(p []byte) (int, error) {
	for len(b.ready) == 0 {
		if b.done {
			return 0, io.EOF
		}
		if err := b.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, b.ready)
	b.ready = b.ready[n:]
	return n, nil
}

// fill reads more of the stream, reopening it when it ended.
func (b *Body) fill() error {
	buf := make([]byte, 32<<10)
	n, err := b.cur.Read(buf)
	b.pending = append(b.pending, buf[:n]...)
	b.release()
	if err == nil {
		return nil
	}
	if cerr := b.ctx.Err(); cerr != nil {
		// The SDK cancelled the listen (the session closed).
		return cerr
	}
	_ = b.cur.Close()
	b.pending = nil // an unfinished event cannot be finished by another stream
	if time.Since(b.since) >= b.pol.Stable {
		b.failures = 0
	}
	for {
		if b.failures >= b.pol.Attempts {
			b.log.Warn(fmt.Sprintf("MCP server %s: its subscriptions/listen stream ended and could not be opened again in %d attempts; its list changes are seen only when the lists are fetched again", b.server, b.pol.Attempts))
			b.done = true
			b.cur = io.NopCloser(bytes.NewReader(nil))
			return nil
		}
		wait := min(b.pol.First<<b.failures, b.pol.Max)
		b.failures++
		t := time.NewTimer(wait)
		select {
		case <-b.ctx.Done():
			t.Stop()
			return b.ctx.Err()
		case <-t.C:
		}
		resp, err := b.reopen(b.ctx)
		if err == nil && !okStream(resp) {
			resp.Body.Close()
			err = fmt.Errorf("HTTP %s", resp.Status)
		}
		if err != nil {
			if b.ctx.Err() != nil {
				return b.ctx.Err()
			}
			b.log.Debug("mcp: opening subscriptions/listen again failed", "server", b.server, "err", err)
			continue
		}
		b.log.Debug("mcp: subscriptions/listen opened again", "server", b.server)
		b.cur, b.since, b.reopened = resp.Body, time.Now(), true
		return nil
	}
}

func okStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return resp.StatusCode == http.StatusOK && mt == "text/event-stream"
}

// release moves the whole events of pending to ready. The server's answer
// to the listen request itself is held back, as the end of that stream: the
// SDK would take it for the end of listening.
func (b *Body) release() {
	for {
		i, sep := bytes.Index(b.pending, []byte("\n\n")), 2
		if j := bytes.Index(b.pending, []byte("\r\n\r\n")); j >= 0 && (i < 0 || j < i) {
			i, sep = j, 4
		}
		if i < 0 {
			break
		}
		ev := b.pending[:i+sep]
		b.pending = b.pending[i+sep:]
		msg := b.message(ev)
		switch {
		case msg.answers:
		case msg.method == ackMethod && b.reopened:
			// After the acknowledgement: what it announces is then sure
			// to be newer than the listing the notifications cause.
			b.ready = append(append(b.ready, ev...), b.missed...)
			b.reopened = false
		case b.reopened:
			b.ready = append(append(b.ready, b.missed...), ev...)
			b.reopened = false
		default:
			b.ready = append(b.ready, ev...)
		}
	}
	if len(b.pending) > maxPending {
		b.ready = append(b.ready, b.pending...)
		b.pending = nil
	}
}

const ackMethod = "notifications/subscriptions/acknowledged"

type eventMessage struct {
	method  string
	answers bool // a response to the listen request
}

// message reads the JSON-RPC message of the event ev.
func (b *Body) message(ev []byte) eventMessage {
	var data []byte
	for line := range bytes.Lines(ev) {
		line = bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if len(data) == 0 || json.Unmarshal(data, &msg) != nil {
		return eventMessage{}
	}
	if msg.Method != "" {
		return eventMessage{method: msg.Method}
	}
	return eventMessage{answers: bytes.Equal(bytes.TrimSpace(msg.ID), bytes.TrimSpace(b.id))}
}

// Close ends the current stream; a Read after it reports the end.
func (b *Body) Close() error {
	b.done, b.ready = true, nil
	return b.cur.Close()
}

// Request keeps the subscriptions/listen stream req opened, whose
// response body is body, open: send sends the same request again when it
// ends. body is returned as it is when req's body cannot be read again.
func Request(req *http.Request, body io.ReadCloser, send func(*http.Request) (*http.Response, error), server string, log *slog.Logger) io.ReadCloser {
	if req.GetBody == nil {
		return body
	}
	rb, err := req.GetBody()
	if err != nil {
		return body
	}
	raw, err := io.ReadAll(io.LimitReader(rb, 1<<20))
	rb.Close()
	if err != nil {
		return body
	}
	reopen := func(ctx context.Context) (*http.Response, error) {
		r := req.Clone(ctx)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		return send(r)
	}
	return Wrap(req.Context(), server, raw, body, reopen, log, Policy{})
}
