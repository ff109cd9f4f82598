package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpFixture is agentapp's server behind mcpserver.RunHTTP on a loopback port.
type httpFixture struct {
	url  string // the endpoint, http://127.0.0.1:PORT/mcp
	host string // 127.0.0.1:PORT
	logs *testkit.SyncBuffer
	stop func() error
}

func startHTTP(t *testing.T, token string) *httpFixture {
	t.Helper()
	d := newDomain(t)
	logger, logs := testkit.NewLogger()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts := d.options()
	opts.Logger = logger
	handler := newHTTPHandler(t, mcpserver.New(opts), &mcpserver.HTTPOptions{Token: token, Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// A long grace: a shutdown that has to wait it out is reported in the
	// log, which the shutdown test checks.
	go func() {
		done <- mcpserver.RunHTTP(ctx, ln, handler, &mcpserver.RunOptions{ShutdownGrace: time.Minute, Logger: logger})
	}()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return &httpFixture{url: "http://" + ln.Addr().String() + mcpserver.HTTPPath, host: ln.Addr().String(), logs: logs, stop: stop}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// post sends an initialize request with the given headers ("Host" sets the
// Host header) and returns the status and body.
func (f *httpFixture) post(t *testing.T, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPBearerToken(t *testing.T) {
	f := startHTTP(t, "s3cret-token")
	for name, h := range map[string]map[string]string{
		"missing":      {},
		"wrong":        {"Authorization": "Bearer s3cret-tokeN"},
		"prefix":       {"Authorization": "Bearer s3cret"},
		"wrong scheme": {"Authorization": "Basic s3cret-token"},
	} {
		status, body := f.post(t, h)
		if status != http.StatusUnauthorized || !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("%s token: status %d %q, want 401 saying how to authenticate", name, status, body)
		}
	}
	if status, body := f.post(t, map[string]string{"Authorization": "bearer s3cret-token"}); status != http.StatusOK {
		t.Fatalf("right token: status %d %s", status, body)
	}

	// A whole session with the token, through the SDK's client.
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   f.url,
		HTTPClient: &http.Client{Transport: bearerTransport{"s3cret-token"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "B-0001"}})
	if err != nil || res.IsError || fmt.Sprint(res.StructuredContent.(map[string]any)["status"]) != "已签收" {
		t.Fatalf("call over HTTP: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPRejectsForeignHostAndOrigin(t *testing.T) {
	f := startHTTP(t, "")
	_, port, _ := net.SplitHostPort(f.host)
	refused := []map[string]string{
		{"Host": "evil.example.com"},
		{"Host": "evil.example.com:" + port, "Origin": "http://evil.example.com:" + port},
		{"Origin": "http://evil.example.com"},
		{"Origin": "https://127.0.0.1.evil.example.com"},
		{"Origin": "null"},
	}
	for _, h := range refused {
		if status, body := f.post(t, h); status != http.StatusForbidden || !strings.Contains(body, "Forbidden") {
			t.Errorf("headers %v: status %d %q, want 403", h, status, body)
		}
	}
	accepted := []map[string]string{
		{},
		{"Host": "localhost:" + port, "Origin": "http://localhost:" + port},
		{"Host": "127.0.0.1:" + port, "Origin": "http://127.0.0.1:" + port},
		{"Host": "[::1]:" + port, "Origin": "http://[::1]:" + port},
	}
	for _, h := range accepted {
		if status, body := f.post(t, h); status != http.StatusOK {
			t.Errorf("headers %v: status %d %q, want 200", h, status, body)
		}
	}
	if !strings.Contains(f.logs.String(), "foreign Host or Origin") {
		t.Error("refusals are not logged")
	}
	res, err := http.Get("http://" + f.host + "/elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("other paths: %d, want 404", res.StatusCode)
	}
}

func TestHTTPShutdownEndsOpenStreams(t *testing.T) {
	f := startHTTP(t, "")
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	// The client opens the standalone GET event stream after initialize
	// (a 2025-11-25 session has one); it stays open until the server ends it.
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.stop(); err != nil {
		t.Fatalf("mcpserver.RunHTTP after shutdown: %v", err)
	}
	if logs := f.logs.String(); strings.Contains(logs, "cut off") {
		t.Fatalf("shutdown had to wait out the grace period; open streams were not ended:\n%s", logs)
	}
	if _, err := http.Get(f.url); err == nil {
		t.Fatal("server still accepts connections after shutdown")
	}
}

func TestResolveHTTPAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, token, want, wantErr string
	}{
		{addr: "127.0.0.1:8080", want: "127.0.0.1:8080"},
		{addr: "127.0.0.1:0", want: "127.0.0.1:0"},
		{addr: ":8080", want: "127.0.0.1:8080"},
		{addr: "8080", want: "127.0.0.1:8080"},
		{addr: "localhost:9", want: "localhost:9"},
		{addr: "[::1]:9", want: "[::1]:9"},
		{addr: "0.0.0.0:8080", wantErr: "--token or AGENTAPP_SERVER_TOKEN"},
		{addr: "[::]:8080", wantErr: "without a bearer token"},
		{addr: "192.168.1.5:80", wantErr: "127.0.0.1:80"},
		{addr: "example.com:80", wantErr: "without a bearer token"},
		{addr: "0.0.0.0:8080", token: "t", want: "0.0.0.0:8080"},
		{addr: "", wantErr: "empty --http address"},
		{addr: "127.0.0.1", wantErr: "host:port"},
		{addr: "127.0.0.1:99999", wantErr: "invalid port"},
		// A name under .localhost is bound as 127.0.0.1, never resolved.
		{addr: "app.localhost:9", want: "127.0.0.1:9"},
		{addr: "App.LocalHost.:9", want: "127.0.0.1:9"},
		{addr: "a.b.localhost:0", token: "t", want: "127.0.0.1:0"},
		{addr: "localhost.example.com:9", wantErr: "without a bearer token"},
		{addr: "notlocalhost:9", wantErr: "without a bearer token"},
		// A token no client could send is refused, wherever it is used.
		{addr: "0.0.0.0:8080", token: "   ", wantErr: "only white space"},
		{addr: "127.0.0.1:8080", token: "\t\n", wantErr: "only white space"},
		{addr: "0.0.0.0:8080", token: "to\x01ken", wantErr: "control character"},
		{addr: "0.0.0.0:8080", token: " token\n", want: "0.0.0.0:8080"},
	} {
		got, err := mcpserver.ResolveHTTPAddr(tc.addr, tc.token)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("mcpserver.ResolveHTTPAddr(%q, %q) = %q, %v; want an error containing %q", tc.addr, tc.token, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("mcpserver.ResolveHTTPAddr(%q, %q) = %q, %v; want %q", tc.addr, tc.token, got, err, tc.want)
		}
	}
}

// TestHTTPRefusesIDsItCannotEcho: over HTTP too, an id the SDK would change
// (1.5 answered as 1, 2^53+1 as 2^53) or a null request id is refused with
// -32600 instead of being answered under another number.
func TestHTTPRefusesIDsItCannotEcho(t *testing.T) {
	f := startHTTP(t, "")
	for _, id := range []string{"1.5", "1e29", "9007199254740993", "null"} {
		body := strings.Replace(initializeBody, `"id":1`, `"id":`+id, 1)
		for _, b := range []string{body, "[" + body + "]"} {
			req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var msg struct {
				ID    any                `json:"id"`
				Error struct{ Code int } `json:"error"`
			}
			if res.StatusCode != http.StatusBadRequest || json.Unmarshal(got, &msg) != nil || msg.Error.Code != -32600 || msg.ID != nil {
				t.Errorf("id %s in %.1s…: status %d, body %s; want 400 with a -32600 error for id null", id, b, res.StatusCode, got)
			}
		}
	}
	if status, body := f.post(t, nil); status != http.StatusOK {
		t.Fatalf("a good initialize after the refusals: %d %s", status, body)
	}
}
