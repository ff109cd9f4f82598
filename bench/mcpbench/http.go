//go:build linux

package mcpbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HTTPOptions is a load of MCP sessions on a streamable HTTP server that
// runs already (compare.sh starts it and gives its process id).
type HTTPOptions struct {
	Name      string
	URL       string // the MCP endpoint, http://HOST:PORT/mcp
	PID       int    // the server's process: CPU and memory are read from /proc/PID
	Sessions  int    // clients at once, each with its own session (or, stateless, its own connection)
	Calls     int    // measured sequential calls per session
	Warmup    int    // calls per session before the measured ones
	Tool      string
	Args      json.RawMessage
	Stateless bool          // the server keeps no sessions: no Mcp-Session-Id, no memory per session
	Ready     time.Duration // how long to wait for the server to answer at all
	Log       func(format string, args ...any)
}

// MaxHTTPSessions caps the sessions of one load.
const MaxHTTPSessions = 4096

// MeasureHTTP opens o.Sessions sessions, reads the server's memory with all
// of them open and idle, then has every session make its calls at once,
// each waiting for its answer before the next (as one client does), and
// ends the sessions.
func MeasureHTTP(ctx context.Context, o HTTPOptions) (*HTTPResult, error) {
	if o.Sessions < 1 || o.Sessions > MaxHTTPSessions {
		return nil, fmt.Errorf("sessions must be 1 to %d, not %d", MaxHTTPSessions, o.Sessions)
	}
	if o.Calls < 1 || o.Warmup < 0 || o.PID <= 0 || o.Tool == "" {
		return nil, errors.New("calls ≥ 1, warmup ≥ 0, a server pid and a tool are required")
	}
	if o.Ready <= 0 {
		o.Ready = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if len(o.Args) == 0 {
		o.Args = json.RawMessage(`{}`)
	}
	params, err := ToolsCallParams(o.Tool, o.Args)
	if err != nil {
		return nil, err
	}
	// net/http's client only waits for the server to listen; the
	// sessions speak on connections of their own (rawConn). A request
	// sent on a connection the server closed while it was idle (Node's
	// http server does after 5 s) is sent again once on a new one (see
	// httpSession.post) and counted.
	tr := &http.Transport{DisableKeepAlives: true, DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	if err := waitHTTP(ctx, hc, o.URL, o.Ready); err != nil {
		return nil, err
	}
	mode := "stateful"
	if o.Stateless {
		mode = "stateless"
	}
	r := &HTTPResult{Name: o.Name, URL: o.URL, Mode: mode, Sessions: o.Sessions, CallsPerSession: o.Calls, Warmup: o.Warmup,
		Tool: o.Tool, Args: o.Args, LoadBefore: LoadAvg()}
	before, err := rssOf(o.PID)
	if err != nil {
		return nil, err
	}
	r.RSSBeforeMiB = before
	ss := make([]*httpSession, o.Sessions)
	var resent atomic.Int64
	defer func() {
		for _, s := range ss {
			if s != nil {
				s.close()
			}
		}
	}()
	if err := parallel(o.Sessions, func(i int) error {
		s := &httpSession{url: o.URL, resent: &resent}
		if err := s.open(ctx); err != nil {
			return fmt.Errorf("session %d: %w", i+1, err)
		}
		ss[i] = s
		return nil
	}); err != nil {
		return nil, err
	}
	if r.RSSOpenMiB, err = rssOf(o.PID); err != nil {
		return nil, err
	}
	if !o.Stateless {
		r.MemPerSessionKiB = round3((r.RSSOpenMiB - r.RSSBeforeMiB) * 1024 / float64(o.Sessions))
	}
	if err := parallel(o.Sessions, func(i int) error {
		for range o.Warmup {
			if _, err := ss[i].call(ctx, params); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	lat := make([][]time.Duration, o.Sessions)
	cpu0, err := CPUOf(o.PID)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = parallel(o.Sessions, func(i int) error {
		lat[i] = make([]time.Duration, 0, o.Calls)
		for range o.Calls {
			d, err := ss[i].call(ctx, params)
			if err != nil {
				return err
			}
			lat[i] = append(lat[i], d)
		}
		return nil
	})
	wall := time.Since(start)
	if err != nil {
		return nil, err
	}
	cpu1, err := CPUOf(o.PID)
	if err != nil {
		return nil, err
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	r.Calls = len(all)
	r.ThroughputCPS = round3(float64(len(all)) / wall.Seconds())
	r.P50US, r.P99US = us(Percentile(all, 50)), us(Percentile(all, 99))
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	r.MeanUS = us(sum / time.Duration(len(all)))
	r.CPUPerCallUS = round3(float64(cpu1-cpu0) / float64(time.Microsecond) / float64(len(all)))
	r.LoadAfter = LoadAvg()
	r.Resent = resent.Load()
	return r, nil
}

// parallel runs f(0) … f(n-1) at once and returns the first error.
func parallel(n int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitHTTP waits until something answers HTTP at url.
func waitHTTP(ctx context.Context, hc *http.Client, url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("no HTTP server answered at %s within %s: %w", url, limit, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// httpSession is one client of a streamable HTTP server: one keep-alive
// connection of its own, spoken to directly (see rawConn), as one MCP
// client holds one.
type httpSession struct {
	url    string
	id     string // Mcp-Session-Id; "" for a stateless server
	nextID int64
	resent *atomic.Int64 // requests sent again after their connection broke
	conn   *rawConn
}

const httpInitParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcpbench","version":"1"}}`

func (s *httpSession) open(ctx context.Context) error {
	c, err := newRawConn(s.url)
	if err != nil {
		return err
	}
	s.conn = c
	m, hdr, err := s.post(ctx, "initialize", json.RawMessage(httpInitParams), true)
	if err != nil {
		return err
	}
	if m.Error != nil {
		return fmt.Errorf("initialize: %w", m.Error)
	}
	s.id = hdr.Get("Mcp-Session-Id")
	_, _, err = s.post(ctx, "notifications/initialized", nil, false)
	return err
}

// close ends the session (DELETE) and closes its connection.
func (s *httpSession) close() {
	if s.conn == nil {
		return
	}
	defer s.conn.close()
	if s.id == "" {
		return
	}
	hdr := http.Header{"Mcp-Session-Id": {s.id}}
	if resp, err := s.conn.roundTrip(context.Background(), http.MethodDelete, hdr, nil); err == nil {
		s.conn.finish(resp)
	}
}

// call makes one tools/call and checks its answer: no error, no isError,
// structuredContent present.
func (s *httpSession) call(ctx context.Context, params json.RawMessage) (time.Duration, error) {
	start := time.Now()
	m, _, err := s.post(ctx, "tools/call", params, true)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if _, err := CheckToolResult(m); err != nil {
		return 0, err
	}
	if !bytes.Contains(m.Result, []byte(`"structuredContent"`)) {
		return 0, fmt.Errorf("the result has no structuredContent: %.300s", m.Result)
	}
	return d, nil
}

// maxHTTPAnswer bounds one answer read from the server.
const maxHTTPAnswer = 4 << 20

// post sends one message; for a request (call), it returns the response,
// read from a JSON body or from an event stream.
func (s *httpSession) post(ctx context.Context, method string, params json.RawMessage, call bool) (Message, http.Header, error) {
	var body []byte
	id := int64(0)
	if call {
		s.nextID++
		id = s.nextID
		body = AppendRequest(nil, id, method, params)
	} else {
		body = AppendNotification(nil, method, params)
	}
	hdr := requestHeader(http.Header{}, s.id, method)
	resp, err := s.conn.roundTrip(ctx, http.MethodPost, hdr, body)
	if err != nil && brokenConn(err) && s.resent != nil {
		// The connection broke before any answer (the server closed it
		// while idle): once more, on a new one.
		s.resent.Add(1)
		resp, err = s.conn.roundTrip(ctx, http.MethodPost, hdr, body)
	}
	if err != nil {
		return Message{}, nil, err
	}
	defer s.conn.finish(resp)
	lr := io.LimitReader(resp.Body, maxHTTPAnswer)
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(lr, 500))
		return Message{}, nil, fmt.Errorf("%s: HTTP %s: %s", method, resp.Status, bytes.TrimSpace(msg))
	}
	if !call {
		return Message{}, resp.Header, nil
	}
	m, err := readAnswer(lr, resp.Header.Get("Content-Type"), id)
	if err != nil {
		return Message{}, nil, fmt.Errorf("%s: %w", method, err)
	}
	return m, resp.Header, nil
}

// rawConn speaks HTTP/1.1 on one keep-alive connection itself: the request
// written in one system call, the response parsed on the caller's
// goroutine. net/http's client costs about 120 µs of CPU per call here
// (a read and a write goroutine per connection, hand-offs between them
// and the caller, a shared pool), which on this 2-core machine the load
// generator takes from the server it measures; this costs a fraction of it
// and the same for every server (bench/NOTES.md).
type rawConn struct {
	addr, host, path string
	c                net.Conn
	br               *bufio.Reader
	wbuf             []byte
}

func newRawConn(rawURL string) (*rawConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("the load generator speaks plain http, not %q", u.Scheme)
	}
	path := u.RequestURI()
	return &rawConn{addr: u.Host, host: u.Host, path: path}, nil
}

// roundTrip sends one request and reads the response's status and
// headers; the caller reads the body and then calls finish.
func (rc *rawConn) roundTrip(ctx context.Context, method string, hdr http.Header, body []byte) (*http.Response, error) {
	if rc.c == nil {
		c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", rc.addr)
		if err != nil {
			return nil, err
		}
		rc.c = c
		if rc.br == nil {
			rc.br = bufio.NewReaderSize(c, 16<<10)
		} else {
			rc.br.Reset(c)
		}
	}
	// Every wait is bounded: a server that stops answering fails the
	// load instead of hanging it.
	deadline := time.Now().Add(60 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	rc.c.SetDeadline(deadline)
	b := rc.wbuf[:0]
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, rc.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, rc.host...)
	b = append(b, "\r\n"...)
	for k, vs := range hdr {
		for _, v := range vs {
			b = append(b, k...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	rc.wbuf = b
	if _, err := rc.c.Write(b); err != nil {
		rc.close()
		return nil, err
	}
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		rc.close()
		return nil, err
	}
	return resp, nil
}

// finish reads what is left of resp's body, so that the connection can
// carry the next request, or closes the connection if it cannot.
func (rc *rawConn) finish(resp *http.Response) {
	_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxHTTPAnswer))
	resp.Body.Close()
	if err != nil || resp.Close || rc.c == nil {
		rc.close()
	}
}

func (rc *rawConn) close() {
	if rc.c != nil {
		rc.c.Close()
		rc.c = nil
	}
}

// requestHeader sets the headers of a request of method in session id.
func requestHeader(h http.Header, id, method string) http.Header {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if method != "initialize" {
		h.Set("MCP-Protocol-Version", "2025-06-18")
	}
	if id != "" {
		h.Set("Mcp-Session-Id", id)
	}
	return h
}

// brokenConn reports whether err is a connection reset or closed before
// any answer.
func brokenConn(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// readAnswer reads the response to id from a JSON body or an event stream
// (skipping the server's notifications and other events).
func readAnswer(r io.Reader, contentType string, id int64) (Message, error) {
	want := strconv.FormatInt(id, 10)
	if strings.HasPrefix(contentType, "application/json") {
		b, err := io.ReadAll(r)
		if err != nil {
			return Message{}, err
		}
		m, err := DecodeMessage(bytes.TrimSpace(b))
		if err != nil {
			return Message{}, err
		}
		if string(m.ID) != want {
			return Message{}, fmt.Errorf("the answer is for id %s, not %s", m.ID, want)
		}
		return m, nil
	}
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return Message{}, fmt.Errorf("unexpected Content-Type %q", contentType)
	}
	br := bufio.NewReader(r)
	var data []byte
	for {
		line, err := br.ReadBytes('\n')
		if err != nil && len(line) == 0 {
			return Message{}, fmt.Errorf("the event stream ended without the answer to id %s", want)
		}
		line = bytes.TrimRight(line, "\r\n")
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			continue
		}
		if len(line) > 0 || len(data) == 0 {
			continue
		}
		m, err := DecodeMessage(data)
		data = data[:0]
		if err != nil {
			return Message{}, err
		}
		if m.IsResponse() && string(m.ID) == want {
			return m, nil
		}
	}
}

// CPUOf is the CPU time of every thread of process pid so far, summed from
// /proc/PID/task/*/schedstat (nanoseconds; /proc/PID/stat counts 10 ms
// ticks, too coarse for a few thousand short calls). Threads that ended
// are not counted; the servers measured keep theirs.
func CPUOf(pid int) (time.Duration, error) {
	return cpuOfRoot("/proc", pid)
}

func cpuOfRoot(root string, pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(filepath.Join(root, strconv.Itoa(pid), "task", "*", "schedstat"))
	if err != nil {
		return 0, err
	}
	if len(tasks) == 0 {
		return 0, fmt.Errorf("process %d: no threads in %s (has it exited?)", pid, root)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		ns, err := ParseSchedstat(b)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", t, err)
		}
		sum += ns
	}
	return sum, nil
}

// ParseSchedstat reads the time on CPU, the first field of a schedstat
// line.
func ParseSchedstat(b []byte) (time.Duration, error) {
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return 0, fmt.Errorf("a schedstat line has 3 fields, not %d: %.80q", len(f), b)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || ns < 0 {
		return 0, fmt.Errorf("bad time on CPU %q", f[0])
	}
	return time.Duration(ns), nil
}

// rssOf is VmRSS of process pid in MiB.
func rssOf(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return math.NaN(), err
	}
	m, err := ParseStatus(b)
	if err != nil {
		return math.NaN(), err
	}
	return float64(m.RSS) / (1 << 20), nil
}
