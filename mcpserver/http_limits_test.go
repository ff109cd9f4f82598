package mcpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

// connBound is how long a test waits for the server to close a
// connection or to answer. The timeouts under test are a fraction of it,
// so a slow machine cannot fail the test, and a server that never closes
// a connection cannot hang it.
const connBound = 10 * time.Second

// limitsFixture is a server behind RunHTTP with the given options, on a
// loopback port.
type limitsFixture struct {
	addr  string // 127.0.0.1:PORT
	token string
}

func startLimits(t *testing.T, token string, opts *mcpserver.RunOptions) *limitsFixture {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(&mcpserver.Options{Version: "test"})
	handler := newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: token})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.RunHTTP(ctx, ln, handler, opts) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunHTTP: %v", err)
		}
	})
	return &limitsFixture{addr: ln.Addr().String(), token: token}
}

// dial opens a raw connection to the server; every read on it gives up
// after connBound.
func (f *limitsFixture) dial(t *testing.T) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", f.addr, connBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, r: bufio.NewReader(c)}
}

type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (c *rawConn) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.c, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// response reads one response and its whole body.
func (c *rawConn) response() (*http.Response, string) {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(connBound))
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("no response within %v: %v", connBound, err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		c.t.Fatalf("reading the response body: %v", err)
	}
	return res, string(body)
}

// closedByServer waits up to connBound for the server to close the
// connection and fails if it does not.
func (c *rawConn) closedByServer(what string) {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(connBound))
	n, err := io.Copy(io.Discard, c.r)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("%s: the server kept the connection open for %v", what, connBound)
	}
	if n > 0 {
		c.t.Errorf("%s: %d unexpected bytes before the connection closed", what, n)
	}
}

// stillOpen checks that the server leaves the connection open, and
// silent, for d; r reads what comes on it (the connection, or the body of
// a response on it).
func (c *rawConn) stillOpen(what string, r io.Reader, d time.Duration) {
	c.t.Helper()
	c.c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 256)
	n, err := r.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		c.t.Fatalf("%s: want the connection still open after %v, got %v (%q)", what, d, err, buf[:n])
	}
}

// request is the head of an HTTP request to the MCP endpoint.
func (f *limitsFixture) request(method, token string, header ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n", method, mcpserver.HTTPPath, f.addr)
	if token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", token)
	}
	for _, h := range header {
		b.WriteString(h + "\r\n")
	}
	return b.String()
}

// post is a whole POST request carrying body.
func (f *limitsFixture) post(token, body string, header ...string) string {
	return f.request(http.MethodPost, token, append(header, fmt.Sprintf("Content-Length: %d", len(body)))...) + "\r\n" + body
}

const (
	testHeaderTimeout = 200 * time.Millisecond
	testBodyTimeout   = 300 * time.Millisecond
	testIdleTimeout   = 250 * time.Millisecond
)

// TestHTTPSlowClients checks that a client cannot hold a connection by
// sending slowly, or by sending nothing, while a live event stream is left
// alone.
func TestHTTPSlowClients(t *testing.T) {
	f := startLimits(t, "tok-slow", &mcpserver.RunOptions{
		ReadHeaderTimeout: testHeaderTimeout,
		BodyReadTimeout:   testBodyTimeout,
		IdleTimeout:       testIdleTimeout,
		ShutdownGrace:     time.Second,
	})

	t.Run("unauthenticated slow body", func(t *testing.T) {
		// The refusal is decided on the headers: it must come at once,
		// without the body, and end the connection.
		c := f.dial(t)
		c.write(f.request(http.MethodPost, "", "Content-Length: 1000") + "\r\n{")
		res, body := c.response()
		if res.StatusCode != http.StatusUnauthorized || !res.Close {
			t.Fatalf("status %d, Connection: close %v (%q); want 401 closing the connection", res.StatusCode, res.Close, body)
		}
		c.closedByServer("after a 401")
	})

	t.Run("wrong Host, slow body", func(t *testing.T) {
		c := f.dial(t)
		c.write(strings.Replace(f.request(http.MethodPost, "tok-slow", "Content-Length: 1000"), "Host: "+f.addr, "Host: evil.example", 1) + "\r\n{")
		res, _ := c.response()
		if res.StatusCode != http.StatusForbidden || !res.Close {
			t.Fatalf("status %d, Connection: close %v; want 403 closing the connection", res.StatusCode, res.Close)
		}
		c.closedByServer("after a 403")
	})

	t.Run("slow headers", func(t *testing.T) {
		c := f.dial(t)
		c.write("POST /mcp HTTP/1.1\r\nHost: " + f.addr + "\r\n")
		c.closedByServer("headers never finished")
	})

	t.Run("authenticated slow body", func(t *testing.T) {
		c := f.dial(t)
		c.write(f.request(http.MethodPost, "tok-slow", "Content-Length: 1000") + "\r\n{")
		// The server gives up on the body; whatever it answers, it
		// must not wait for the rest.
		c.c.SetReadDeadline(time.Now().Add(connBound))
		if res, err := http.ReadResponse(c.r, nil); err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode < 400 {
				t.Fatalf("a body that never came: status %d, want an error", res.StatusCode)
			}
		} else if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("the server waited %v for a body that never came", connBound)
		}
		c.closedByServer("body never finished")
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		c := f.dial(t)
		c.write(f.post("tok-slow", initializeBody))
		if res, body := c.response(); res.StatusCode != http.StatusOK || res.Close {
			t.Fatalf("initialize: status %d, close %v, %s", res.StatusCode, res.Close, body)
		}
		c.closedByServer("kept alive and idle")
	})

	t.Run("event stream outlives the timeouts", func(t *testing.T) {
		c := f.dial(t)
		c.write(f.post("tok-slow", initializeBody))
		res, body := c.response()
		session := res.Header.Get("Mcp-Session-Id")
		if res.StatusCode != http.StatusOK || session == "" {
			t.Fatalf("initialize: status %d, %s", res.StatusCode, body)
		}
		c.write(f.post("tok-slow", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id: "+session))
		if res, _ := c.response(); res.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: status %d", res.StatusCode)
		}

		stream := f.dial(t)
		stream.write(f.request(http.MethodGet, "tok-slow", "Mcp-Session-Id: "+session, "Mcp-Protocol-Version: 2025-06-18") + "\r\n")
		stream.c.SetReadDeadline(time.Now().Add(connBound))
		res, err := http.ReadResponse(stream.r, nil)
		if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("GET event stream: %v %v", err, res)
		}
		// The SDK opens the stream with a comment; then it is quiet for
		// longer than every timeout, several times over.
		events := bufio.NewReader(res.Body)
		if line, err := events.ReadString('\n'); err != nil || !strings.HasPrefix(line, ":") {
			t.Fatalf("start of the event stream: %q %v", line, err)
		}
		if line, err := events.ReadString('\n'); err != nil || line != "\n" {
			t.Fatalf("start of the event stream: %q %v", line, err)
		}
		stream.stillOpen("the GET event stream", events, 4*max(testHeaderTimeout, testBodyTimeout, testIdleTimeout))

		// The session survived the wait too: a ping on it is answered.
		c2 := f.dial(t)
		c2.write(f.post("tok-slow", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "Mcp-Session-Id: "+session, "Mcp-Protocol-Version: 2025-06-18"))
		if res, body := c2.response(); res.StatusCode != http.StatusOK || !strings.Contains(body, `"id":7`) {
			t.Fatalf("ping after the wait: status %d, %s", res.StatusCode, body)
		}
	})
}

// TestHTTPMaxConnections checks that connections beyond the bound wait
// until one closes.
// TestHTTPMaxConnections: a connection beyond MaxConnections is answered
// 503 at once (it used to wait silently in the listen queue until the
// client gave up), and once one closes the next is served.
func TestHTTPMaxConnections(t *testing.T) {
	f := startLimits(t, "", &mcpserver.RunOptions{MaxConnections: 2, MaxConnectionsPerAddress: -1, ReadHeaderTimeout: connBound, IdleTimeout: connBound})
	held := []*rawConn{f.dial(t), f.dial(t)}
	for _, c := range held {
		c.write("GET /elsewhere HTTP/1.1\r\nHost: " + f.addr + "\r\n") // headers unfinished
	}
	third := f.dial(t)
	third.write("GET /elsewhere HTTP/1.1\r\nHost: " + f.addr + "\r\n\r\n")
	if res, body := third.response(); res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "2 connections open") {
		t.Fatalf("a third connection while two are open: status %d %q, want 503 saying why", res.StatusCode, body)
	}
	held[0].c.Close()
	// The slot is freed once the server has seen the close; a bounded retry.
	for try := 0; ; try++ {
		c := f.dial(t)
		c.write("GET /elsewhere HTTP/1.1\r\nHost: " + f.addr + "\r\n\r\n")
		res, _ := c.response()
		if res.StatusCode == http.StatusNotFound {
			break
		}
		if try == 100 {
			t.Fatalf("a connection after one of two closed: status %d, want 404", res.StatusCode)
		}
		c.c.Close()
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHTTPConnectionsPerAddress: idle sockets from one address, with or
// without the token, take at most MaxConnectionsPerAddress; the next one
// from that address gets 503 at once, before authentication, and a client
// at another address is still served.
func TestHTTPConnectionsPerAddress(t *testing.T) {
	f := startLimits(t, "secret", &mcpserver.RunOptions{MaxConnectionsPerAddress: 3, PerAddressOnLoopback: true, ReadHeaderTimeout: connBound, IdleTimeout: connBound})
	for range 3 {
		f.dial(t) // idle: sends nothing
	}
	over := f.dial(t)
	over.write(f.post("", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if res, body := over.response(); res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "your address already has 3 connections open") {
		t.Fatalf("a fourth connection from one address: status %d %q, want 503 saying why", res.StatusCode, body)
	}
	// 127.0.0.2 is another address on Linux's loopback.
	d := net.Dialer{Timeout: connBound, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	c, err := d.Dial("tcp", f.addr)
	if err != nil && runtime.GOOS == "linux" {
		t.Fatalf("dial from 127.0.0.2: %v", err)
	} else if err != nil {
		return // other systems may have 127.0.0.1 alone
	}
	other := &rawConn{t: t, c: c, r: bufio.NewReader(c)}
	t.Cleanup(func() { c.Close() })
	other.write(f.post("", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if res, _ := other.response(); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a client at another address: status %d, want 401 (served, without a token)", res.StatusCode)
	}
}

// sessionClient opens and uses streamable HTTP sessions on url.
type sessionClient struct {
	t   *testing.T
	url string
}

func (c sessionClient) do(session, body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := (&http.Client{Timeout: connBound}).Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	io.Copy(io.Discard, res.Body)
	return res.StatusCode, res.Header.Get("Mcp-Session-Id")
}

// open initializes a session and returns its id, or "" with the status
// if the server refused.
func (c sessionClient) open() (string, int) {
	c.t.Helper()
	status, id := c.do("", initializeBody)
	if status != http.StatusOK {
		return "", status
	}
	if s, _ := c.do(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); s != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: status %d", s)
	}
	return id, status
}

// alive pings the session: 200 if it is open, 404 if the server forgot it.
func (c sessionClient) alive(id string) int {
	c.t.Helper()
	status, _ := c.do(id, `{"jsonrpc":"2.0","id":99,"method":"ping"}`)
	return status
}

func TestHTTPSessionCap(t *testing.T) {
	srv := mcpserver.New(&mcpserver.Options{Version: "test"})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{MaxSessions: 3}))
	defer ts.Close()
	c := sessionClient{t: t, url: ts.URL + mcpserver.HTTPPath}

	var ids []string
	for i := range 5 {
		id, status := c.open()
		if id == "" {
			t.Fatalf("session %d: status %d", i+1, status)
		}
		ids = append(ids, id)
		if i == 2 {
			// The first session is used again: now the second has been
			// idle longest, then the third.
			if s := c.alive(ids[0]); s != http.StatusOK {
				t.Fatalf("ping the first session: %d", s)
			}
		}
	}
	want := []int{http.StatusOK, http.StatusNotFound, http.StatusNotFound, http.StatusOK, http.StatusOK}
	for i, id := range ids {
		if got := c.alive(id); got != want[i] {
			t.Errorf("session %d of 5 with a cap of 3: ping status %d, want %d", i+1, got, want[i])
		}
	}
}

func TestHTTPSessionCapConcurrent(t *testing.T) {
	const limit, clients = 4, 24
	srv := mcpserver.New(&mcpserver.Options{Version: "test"})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{MaxSessions: limit}))
	defer ts.Close()
	c := sessionClient{t: t, url: ts.URL + mcpserver.HTTPPath}

	var mu sync.Mutex
	var ids []string
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			status, id := c.do("", initializeBody)
			switch status {
			case http.StatusOK:
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			case http.StatusServiceUnavailable:
				// Every session was being created or busy: refused, to be retried.
			default:
				t.Errorf("initialize: status %d", status)
			}
		})
	}
	wg.Wait()
	live := 0
	for _, id := range ids {
		if c.alive(id) == http.StatusOK {
			live++
		}
	}
	if live == 0 || live > limit {
		t.Fatalf("%d sessions open after %d initializes with a cap of %d (%d accepted)", live, clients, limit, len(ids))
	}
}

func TestHTTPSessionIdleTimeout(t *testing.T) {
	srv := mcpserver.New(&mcpserver.Options{Version: "test"})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{SessionIdleTimeout: 100 * time.Millisecond}))
	defer ts.Close()
	c := sessionClient{t: t, url: ts.URL + mcpserver.HTTPPath}
	id, status := c.open()
	if id == "" {
		t.Fatalf("initialize: %d", status)
	}
	// Each ping restarts the idle timer, so the pings are spaced well
	// beyond it.
	deadline := time.Now().Add(connBound)
	for {
		time.Sleep(300 * time.Millisecond)
		if c.alive(id) == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a session idle for 300ms at a time is still open after %v with an idle timeout of 100ms", connBound)
		}
	}
}
