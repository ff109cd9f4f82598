package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/internal/lineread"
	"github.com/agentapp/agentapp/internal/rpcwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// IOTransport is the server side of newline-delimited JSON-RPC over a
// pair of streams, the framing MCP's stdio transport specifies: one message
// (or one batch) per line, no newline inside a message.
//
// It replaces the SDK's IOTransport on the server path for speed and for
// resilience. The SDK decodes every incoming line three times with its
// internal JSON decoder (once trying it as a batch, once as a message, once
// more for the method name), and that decoder allocates and clears a fresh
// 32 KiB buffer each time (bench/NOTES.md has the allocation figures).
// This transport checks each line once with the standard library and
// slices the envelope fields out of it without allocating beyond one copy
// of the line, then builds the jsonrpc.Request or jsonrpc.Response the SDK
// expects. Responses to requests are written without re-encoding their
// result, which the SDK has already marshalled.
//
// A line that is not JSON, not a JSON-RPC 2.0 message, or longer than
// MaxLineLength is answered with a JSON-RPC error response (id null, or the
// request's id when it could be read), and the session goes on; the SDK's
// transport ends the session instead. Batches (JSON arrays of messages, part
// of protocol versions before 2025-06-18) are accepted and answered with
// one array, as the SDK's transport does when wrapped.
//
// The end of the input is held back until every request read has been
// answered, within DefaultDrainTimeout (see inflight). Made by
// Server.NewIOTransport, it also answers plain tools/call requests on the
// server's direct path; made as a literal, it hands everything to the SDK.
type IOTransport struct {
	// Reader carries the client's messages. It is closed by Close.
	Reader io.ReadCloser
	// Writer receives the server's messages. It is closed by Close.
	Writer io.WriteCloser
	// MaxLineLength bounds one incoming line in bytes, not counting its
	// line ending; 0 means mcp.DefaultMaxLineLength.
	MaxLineLength int

	srv *Server // the direct path's server; nil for none
}

// NewIOTransport returns the transport for one client on r and w, with
// the server's direct tools/call path (see Server). Connect the server to
// it with Connect.
func (s *Server) NewIOTransport(r io.ReadCloser, w io.WriteCloser) *IOTransport {
	return &IOTransport{Reader: r, Writer: w, srv: s}
}

// Connect implements mcp.Transport. It starts the goroutine that reads
// Reader, so that Close can end a Read blocked on a stream whose Read
// cannot be interrupted (such as a terminal or a blocking pipe on stdin).
func (t *IOTransport) Connect(context.Context) (mcp.Connection, error) {
	if t.Reader == nil || t.Writer == nil {
		return nil, errors.New("mcpserver.IOTransport: Reader and Writer must both be set")
	}
	limit := t.MaxLineLength
	if limit <= 0 {
		limit = mcp.DefaultMaxLineLength
	}
	c := &lineConn{
		r:         t.Reader,
		w:         t.Writer,
		limit:     limit,
		incoming:  make(chan lineItem, 8),
		closed:    make(chan struct{}),
		srv:       t.srv,
		sessionID: "stdio-" + rand.Text(),
	}
	c.toolSession = "mcp:" + c.sessionID
	if t.srv != nil {
		// The connection is the session's standing channel for its
		// tasks' status notifications (tasks_notify.go).
		c.unsink = t.srv.taskNotes.addSink(c.toolSession, c.writeLine, true)
	}
	c.callCtx, c.cancelCalls = context.WithCancel(context.Background())
	c.sessionCtx = agent.WithSession(c.callCtx, c.toolSession)
	go c.readLines()
	return c, nil
}

// lineItem is one line read and decoded, or the error that ended the
// input.
type lineItem struct {
	msgs    []jsonrpc.Message // the messages of the line, for the SDK
	answer  []byte            // what to write back at once (see decodeLine)
	tooLong int               // > 0: the line had this many bytes and was dropped
	err     error             // the input ended; nothing else is set
}

// lineConn is IOTransport's connection.
type lineConn struct {
	r io.ReadCloser
	w io.WriteCloser

	limit    int // longest line accepted, in bytes
	incoming chan lineItem
	readErr  error             // the error that ended the input, once seen
	queue    []jsonrpc.Message // the rest of a batch; Reads are serialised

	writeMu sync.Mutex
	wbuf    []byte // reused for each write, under writeMu

	// The direct path's answers waiting for one write (see answerDirect),
	// under outMu: their bytes, each with its line ending, and their
	// request ids, ended once written; spare and spareIDs are the previous
	// round's, for reuse; flushing is set while a goroutine writes them.
	outMu            sync.Mutex
	outRoom          *sync.Cond // on outMu: the writer took what was queued
	out, spare       []byte
	outIDs, spareIDs []any
	flushing         bool

	batchMu sync.Mutex
	batches map[jsonrpc.ID]*lineBatch

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	// unsink removes the connection from its server's task-status
	// channels (nil without a server).
	unsink func()

	// sessionID names the session for the tools' idempotency rules, the
	// same on the SDK path (ServerSession.ID) and the direct path.
	sessionID string
	// toolSession is sessionID as sessionIDs.of gives it to the tools,
	// made once instead of on every direct call.
	toolSession string

	// pending holds back the end of the input (see inflight).
	pending inflight

	// The direct path (see Server). initID is the id of the initialize
	// request; initialized is set once it has been answered without an
	// error, and only then are calls taken directly. discoverID and
	// discovered do the same for server/discover and the calls of
	// 2026-07-28 (stdiodirectnext.go).
	srv         *Server
	initMu      sync.Mutex
	initID      jsonrpc.ID
	discoverID  jsonrpc.ID
	initialized atomic.Bool
	discovered  atomic.Bool
	// nextMeta is the _meta of the last call of 2026-07-28 taken
	// directly, nextMetaExt its tasks extension (checkNextMeta); the
	// reader's alone.
	nextMeta    []byte
	nextMetaExt bool
	callCtx     context.Context // parent of the direct calls; cancelled by Close
	// sessionCtx is callCtx carrying toolSession, the direct calls'
	// parent, so that execTool finds the session already set.
	sessionCtx  context.Context
	cancelCalls context.CancelFunc
}

// lineBatch gathers the responses to one incoming batch; it is answered
// as one array once every request in it has been answered.
type lineBatch struct {
	unresolved map[jsonrpc.ID]int // index in responses
	responses  [][]byte           // encoded responses, in request order
}

// maxKeptWriteBuffer is the largest write buffer kept between writes; a
// larger one (a big resource read) is released after use.
const maxKeptWriteBuffer = 64 << 10

// readLines frames the input into lines, decodes them and hands the
// messages to Read. Each line gets its own backing array, since the
// messages built from it keep sub-slices (params, result) for as long as
// the SDK holds them.
//
// A call the direct path takes is started here and never reaches Read:
// one goroutine handoff fewer per call than going through the SDK's
// reader.
func (c *lineConn) readLines() {
	lr := lineread.NewReader(bufio.NewReaderSize(c.r, 64<<10), c.limit, 0)
	for {
		line, err := lr.ReadLine()
		var item lineItem
		send := false
		switch {
		case lr.TooLong():
			item, send = lineItem{tooLong: lr.Len()}, true
		case len(bytes.TrimSpace(line)) > 0:
			line = bytes.Clone(line)
			item.msgs, item.answer = c.decodeLine(line)
			c.refuseDuplicate(&item, line)
			c.refuseOverLimit(&item, line)
			send = !(len(item.msgs) == 1 && item.answer == nil && c.srv != nil && !isBatch(line) && c.takeDirect(item.msgs[0]))
			if send {
				c.reserve(item.msgs)
			}
		}
		if send {
			select {
			case c.incoming <- item:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.incoming <- lineItem{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// MaxInFlight bounds the requests a stdio connection has read and not yet
// answered. A request beyond it is answered at once with an error instead
// of being started: each one holds a goroutine until its answer is written,
// so a client that keeps sending without reading its answers would
// otherwise grow the server without end. Notifications are always read, so
// a cancellation still reaches a call that holds a place.
const MaxInFlight = 256

// codeBusy is the JSON-RPC error code of a request refused over
// MaxInFlight, in the range JSON-RPC leaves to servers.
const codeBusy = -32000

// refuseOverLimit turns a line's single request into its error answer when
// MaxInFlight requests are already in flight. Batches (only before
// protocol 2025-06-18) are bounded by MaxBatchItems instead.
func (c *lineConn) refuseOverLimit(item *lineItem, line []byte) {
	if len(item.msgs) != 1 || item.answer != nil || isBatch(line) {
		return
	}
	req, ok := item.msgs[0].(*jsonrpc.Request)
	if !ok || !req.IsCall() || c.pending.count() < MaxInFlight {
		return
	}
	item.msgs, item.answer = nil, appendErrorResponse(nil, req.ID, codeBusy, fmt.Sprintf(
		"server busy: %d requests are already in flight on this connection; wait for their answers before sending more", MaxInFlight))
}

// refuseDuplicate turns a line's single request into its error answer when
// a request with the same id is still being answered on this connection.
// Handed on, the SDK would answer only one of them and the other's place
// in flight would never be freed: after MaxInFlight such ids every request
// was "server busy" for good. (decodeLine checks the ids of a batch.)
func (c *lineConn) refuseDuplicate(item *lineItem, line []byte) {
	if len(item.msgs) != 1 || item.answer != nil || isBatch(line) {
		return
	}
	req, ok := item.msgs[0].(*jsonrpc.Request)
	if !ok || !req.IsCall() || !c.pending.has(req.ID.Raw()) {
		return
	}
	item.msgs, item.answer = nil, appendErrorResponse(nil, req.ID, jsonrpc.CodeInvalidRequest,
		"invalid request: a request with this id is still being answered on this connection; give each request its own id")
}

// reserve notes the calls among msgs, on their way to the SDK, as in
// flight until their answers are written. It runs on the reading goroutine,
// before the next line is decoded, so that refuseDuplicate sees them.
func (c *lineConn) reserve(msgs []jsonrpc.Message) {
	for _, msg := range msgs {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.pending.startSDK(req.ID.Raw())
		}
	}
}

// Read implements mcp.Connection. Lines that cannot be read as JSON-RPC
// messages are answered here, and Read goes on to the next line.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return liftTask(msg), nil
	}
	for {
		if c.readErr != nil {
			c.pending.wait(ctx, DefaultDrainTimeout, c.closed)
			return nil, c.readErr
		}
		var item lineItem
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case item = <-c.incoming:
		case <-c.closed:
			return nil, io.EOF
		}
		if item.err != nil {
			c.readErr = item.err
			continue
		}
		msgs, answer := item.msgs, item.answer
		if item.tooLong > 0 {
			answer = appendErrorResponse(nil, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("invalid request: the line is %d bytes long, over the %d-byte limit; send smaller messages", item.tooLong, c.limit))
		}
		if answer != nil {
			if err := c.writeLine(answer); err != nil {
				return nil, err
			}
		}
		if len(msgs) > 0 {
			c.queue = msgs[1:]
			return liftTask(msgs[0]), nil
		}
	}
}

// decodeLine turns one line into the messages it holds. answer, when not
// nil, is what to write back at once: the error response to a line that is
// not a message, or the errors of a batch in which nothing else needs an
// answer.
func (c *lineConn) decodeLine(line []byte) (msgs []jsonrpc.Message, answer []byte) {
	if !json.Valid(line) {
		return nil, appendErrorResponse(nil, jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: the line is not valid JSON")
	}
	i := jsonscan.SkipSpace(line, 0)
	if line[i] != '[' {
		msg, id, problem := rpcwire.Decode(line[i:])
		if problem != "" {
			return nil, appendErrorResponse(nil, id, jsonrpc.CodeInvalidRequest, "invalid request: "+problem)
		}
		return []jsonrpc.Message{msg}, nil
	}
	var elems [][]byte
	jsonscan.ForEachElement(line[i:], func(v []byte) { elems = append(elems, v) })
	if len(elems) == 0 {
		return nil, appendErrorResponse(nil, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: empty batch")
	}
	if len(elems) > MaxBatchItems {
		return nil, batchTooLong(len(elems))
	}
	batch := &lineBatch{unresolved: map[jsonrpc.ID]int{}}
	c.batchMu.Lock()
	defer c.batchMu.Unlock()
	for _, v := range elems {
		msg, id, problem := rpcwire.Decode(v)
		if problem == "" {
			if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
				if _, dup := batch.unresolved[req.ID]; dup {
					problem = "the batch uses this id twice"
				} else if _, dup := c.batches[req.ID]; dup || c.pending.has(req.ID.Raw()) {
					problem = "a request with this id is still being answered"
				} else {
					batch.unresolved[req.ID] = len(batch.responses)
					batch.responses = append(batch.responses, nil)
				}
			}
		}
		if problem != "" {
			batch.responses = append(batch.responses,
				appendErrorResponse(nil, id, jsonrpc.CodeInvalidRequest, "invalid request: "+problem))
			continue
		}
		msgs = append(msgs, msg)
	}
	if len(batch.unresolved) == 0 {
		// Nothing in the batch waits for the server: answer the invalid
		// elements now (JSON-RPC sends nothing for notifications alone).
		if len(batch.responses) > 0 {
			answer = appendBatch(nil, batch.responses)
		}
		return msgs, answer
	}
	if c.batches == nil {
		c.batches = make(map[jsonrpc.ID]*lineBatch)
	}
	for id := range batch.unresolved {
		c.batches[id] = batch
	}
	return msgs, nil
}

// Write implements mcp.Connection.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		defer c.pending.endSDK(resp.ID.Raw())
	}
	if isResp && c.srv != nil {
		c.noteAnswer(resp)
	}
	if isResp {
		c.batchMu.Lock()
		batch := c.batches[resp.ID]
		if batch != nil {
			delete(c.batches, resp.ID)
		}
		c.batchMu.Unlock()
		if batch != nil {
			enc, err := c.encode(nil, msg)
			if err != nil {
				return err
			}
			c.batchMu.Lock()
			batch.responses[batch.unresolved[resp.ID]] = enc
			delete(batch.unresolved, resp.ID)
			done := len(batch.unresolved) == 0
			c.batchMu.Unlock()
			if !done {
				return nil
			}
			return c.writeLine(appendBatch(nil, batch.responses))
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	buf, err := c.encode(c.wbuf[:0], msg)
	if err != nil {
		return err
	}
	buf = append(buf, '\n')
	_, err = c.w.Write(buf)
	if cap(buf) <= maxKeptWriteBuffer {
		c.wbuf = buf
	} else {
		c.wbuf = nil
	}
	return err
}

// encode appends msg's wire form to dst. An error response is first made
// safe to send (see wireSafeError: the SDK raises some errors, such as a
// params decoding failure, before any middleware sees them), and a response
// that still cannot be encoded is answered with an internal error for its
// id: failing the write would end the session, and the client would wait
// for an answer that never comes.
func (c *lineConn) encode(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return encodeMessage(dst, msg)
	}
	if resp.Error != nil {
		safe := *resp
		if we, ok := wireSafeError("", nil, resp.Error).(*jsonrpc.Error); ok {
			safe.Error = we
		}
		msg = &safe
	}
	out, err := encodeMessage(dst, msg)
	if err == nil {
		return out, nil
	}
	if c.srv != nil {
		c.srv.logger.Error("cannot encode a response; answered with an internal error instead", "error", err)
	}
	return appendErrorResponse(dst[:0], resp.ID, jsonrpc.CodeInternalError,
		"internal error: the answer to this request could not be encoded; the server is still running"), nil
}

// answerDirect writes the answer to the direct call id (unless write is
// false: the connection is closing) and then ends the call.
//
// Answers that finish together go out in one write(2): a system call per
// answer was a large share of a pipelined call's CPU, and the client
// needs fewer reads too. Whoever finds no write under way becomes the
// writer. Before writing, it lets the other goroutines that can run go
// first when other direct calls are still in flight, so that the answers
// they finish meanwhile join its write; they queue theirs and return
// without waiting. The writer never waits for a call that cannot run (one
// blocked on a lock or the network): yielding runs only what is runnable.
// A lone call is written at once, so a sequential client sees no delay.
//
// A client that does not read its answers holds the writer in write(2);
// the queue then stops at maxQueuedAnswers bytes and later answers wait
// for room, so the calls behind them stop the reader as they did before
// writes were shared, instead of piling up in memory.
func (c *lineConn) answerDirect(id any, resp []byte, write bool) {
	c.outMu.Lock()
	if c.outRoom == nil {
		c.outRoom = sync.NewCond(&c.outMu)
	}
	for c.flushing && len(c.out) >= maxQueuedAnswers {
		c.outRoom.Wait()
	}
	if write {
		c.out = append(append(c.out, resp...), '\n')
	}
	c.outIDs = append(c.outIDs, id)
	if c.flushing {
		c.outMu.Unlock()
		return
	}
	c.flushing = true
	queued := len(c.outIDs)
	c.outMu.Unlock()
	c.pending.mu.Lock()
	others := len(c.pending.direct) > queued
	c.pending.mu.Unlock()
	if others {
		runtime.Gosched()
	}
	c.outMu.Lock()
	for len(c.outIDs) > 0 {
		buf, ids := c.out, c.outIDs
		c.out, c.outIDs = c.spare[:0], c.spareIDs[:0]
		c.outRoom.Broadcast()
		c.outMu.Unlock()
		if len(buf) > 0 {
			c.writeMu.Lock()
			_, _ = c.w.Write(buf) // as before: a direct call has no one to report a failed write to
			c.writeMu.Unlock()
		}
		for _, id := range ids {
			c.pending.endDirect(id)
		}
		clear(ids)
		if cap(buf) > maxKeptWriteBuffer {
			buf = nil
		}
		c.outMu.Lock()
		c.spare, c.spareIDs = buf[:0], ids[:0]
	}
	c.flushing = false
	c.outRoom.Broadcast()
	c.outMu.Unlock()
}

// maxQueuedAnswers bounds the bytes of direct answers waiting for the
// writer (see answerDirect).
const maxQueuedAnswers = 1 << 20

// writeLine writes one encoded message (or batch) and its line ending.
func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection: it closes both streams and ends a Read
// in progress.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		if c.unsink != nil {
			c.unsink()
		}
		c.cancelCalls()
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
		close(c.closed)
	})
	return c.closeErr
}

// SessionID implements mcp.Connection. The id is random and never leaves
// the process (stdio has no session header); it keys the tools'
// idempotency rules for this connection on both request paths.
func (c *lineConn) SessionID() string { return c.sessionID }

// encodeMessage appends msg's wire form to dst. A successful response,
// nearly every message a server writes, is assembled directly: its result
// was marshalled by the SDK's encoder, which never puts a line break
// inside it. Anything else goes through the SDK's encoder.
func encodeMessage(dst []byte, msg jsonrpc.Message) ([]byte, error) {
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.Error == nil && len(resp.Result) > 0 &&
		bytes.IndexByte(resp.Result, '\n') < 0 && bytes.IndexByte(resp.Result, '\r') < 0 {
		dst = append(dst, `{"jsonrpc":"2.0","id":`...)
		dst = appendID(dst, resp.ID)
		dst = append(dst, `,"result":`...)
		dst = append(dst, resp.Result...)
		return append(dst, '}'), nil
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, fmt.Errorf("encoding a JSON-RPC message: %w", err)
	}
	return append(dst, data...), nil
}

// appendID appends id as JSON: a number, a string, or null.
func appendID(dst []byte, id jsonrpc.ID) []byte {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.AppendInt(dst, v, 10)
	case string:
		b, _ := json.Marshal(v) // a string always encodes
		return append(dst, b...)
	}
	return append(dst, "null"...)
}

// appendErrorResponse appends a JSON-RPC error response.
func appendErrorResponse(dst []byte, id jsonrpc.ID, code int64, message string) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = appendID(dst, id)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, code, 10)
	dst = append(dst, `,"message":`...)
	m, _ := json.Marshal(message)
	dst = append(dst, m...)
	return append(dst, "}}"...)
}

// appendBatch appends the encoded messages as one JSON array.
func appendBatch(dst []byte, msgs [][]byte) []byte {
	dst = append(dst, '[')
	for i, m := range msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m...)
	}
	return append(dst, ']')
}

// idProblem returns what is wrong with the id of a message, or of any
// message of a batch (an id two of its calls share among them), in the
// valid JSON text body (see decodeID), or "".
// The HTTP handler asks it before the SDK decodes a body, since the SDK
// would change such ids as jsonrpc.MakeID does.
func idProblem(body []byte) string {
	i := jsonscan.SkipSpace(body, 0)
	if i >= len(body) {
		return ""
	}
	var seen map[jsonrpc.ID]bool // the call ids of a batch
	check := func(v []byte) (problem string) {
		if len(v) == 0 || v[0] != '{' {
			return ""
		}
		var rawID []byte
		hasMethod := false
		jsonscan.ForEachMember(v, func(key, val []byte) {
			switch string(key) {
			case "id":
				rawID = val
			case "method":
				hasMethod = true
			}
		})
		switch {
		case rawID == nil:
			return ""
		case bytes.Equal(rawID, []byte("null")):
			if hasMethod {
				return "the id must not be null: MCP requires a string or an integer (leave the id out for a notification)"
			}
			return ""
		}
		id, problem := rpcwire.DecodeID(rawID)
		if problem == "" && hasMethod && seen != nil {
			// The SDK keys a batch's calls by id: the second of two would
			// never be answered.
			if seen[id] {
				return "the batch uses the id " + string(rawID) + " twice; give each request its own id"
			}
			seen[id] = true
		}
		return problem
	}
	if body[i] != '[' {
		return check(body[i:])
	}
	var problem string
	seen = map[jsonrpc.ID]bool{}
	jsonscan.ForEachElement(body[i:], func(v []byte) {
		if problem == "" {
			problem = check(v)
		}
	})
	return problem
}
