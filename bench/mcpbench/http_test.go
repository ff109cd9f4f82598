//go:build linux

package mcpbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type orderIn struct {
	OrderID string `json:"orderId"`
}

type orderOut struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
}

// sdkServer is a Go SDK server on streamable HTTP in this process, with
// getOrderStatus (structured output) and broken (which fails as a tool).
func sdkServer(t *testing.T, stateless bool) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "getOrderStatus"}, func(_ context.Context, _ *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, orderOut, error) {
		return nil, orderOut{OrderID: in.OrderID, Status: "shipped"}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "broken"}, func(context.Context, *mcp.CallToolRequest, orderIn) (*mcp.CallToolResult, orderOut, error) {
		return nil, orderOut{}, errors.New("no such order")
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestMeasureHTTP loads a Go SDK server in this process (so the process
// whose CPU and memory are read is the test itself), stateful and
// stateless, and checks that every call was made and counted.
func TestMeasureHTTP(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprint("stateless=", stateless), func(t *testing.T) {
			r, err := MeasureHTTP(context.Background(), HTTPOptions{
				Name: "sdk", URL: sdkServer(t, stateless), PID: os.Getpid(), Sessions: 4, Calls: 25, Warmup: 2,
				Tool: "getOrderStatus", Args: json.RawMessage(`{"orderId":"A-1"}`), Stateless: stateless,
			})
			if err != nil {
				t.Fatal(err)
			}
			if r.Calls != 100 || r.Sessions != 4 || r.ThroughputCPS <= 0 || r.P50US <= 0 || r.P99US < r.P50US || r.CPUPerCallUS <= 0 {
				t.Errorf("figures do not add up: %+v", r)
			}
			if want := map[bool]string{false: "stateful", true: "stateless"}[stateless]; r.Mode != want {
				t.Errorf("mode %q, want %q", r.Mode, want)
			}
			if stateless && r.MemPerSessionKiB != 0 {
				t.Errorf("a stateless load reports memory per session: %v", r.MemPerSessionKiB)
			}
			if r.RSSBeforeMiB <= 0 || r.RSSOpenMiB <= 0 {
				t.Errorf("no memory read: %+v", r)
			}
		})
	}
}

// TestMeasureHTTPChecksAnswers checks that a tool error fails the load
// instead of being timed.
func TestMeasureHTTPChecksAnswers(t *testing.T) {
	_, err := MeasureHTTP(context.Background(), HTTPOptions{
		URL: sdkServer(t, false), PID: os.Getpid(), Sessions: 2, Calls: 3, Tool: "broken", Args: json.RawMessage(`{"orderId":"A-1"}`),
	})
	if err == nil || !strings.Contains(err.Error(), "no such order") {
		t.Fatalf("err = %v, want the tool's error", err)
	}
	_, err = MeasureHTTP(context.Background(), HTTPOptions{URL: "http://127.0.0.1:1/mcp", PID: os.Getpid(), Sessions: 1, Calls: 1, Tool: "x", Args: json.RawMessage(`{}`), Ready: 50 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no HTTP server answered") {
		t.Fatalf("err = %v, want a clear error for no server", err)
	}
	if _, err := MeasureHTTP(context.Background(), HTTPOptions{Sessions: MaxHTTPSessions + 1}); err == nil {
		t.Fatal("sessions over the cap were accepted")
	}
}

func TestReadAnswer(t *testing.T) {
	sse := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n" +
		"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\n" + "data: \"id\":5,\"result\":{\"content\":[]}}\n\n"
	m, err := readAnswer(strings.NewReader(sse), "text/event-stream", 5)
	if err != nil || string(m.ID) != "5" || !strings.Contains(string(m.Result), "content") {
		t.Fatalf("got %+v, %v; want the response to id 5 (split over two data lines)", m, err)
	}
	if _, err := readAnswer(strings.NewReader(sse), "text/event-stream", 9); err == nil || !strings.Contains(err.Error(), "ended without the answer to id 9") {
		t.Errorf("missing answer: %v", err)
	}
	if m, err := readAnswer(strings.NewReader(`{"jsonrpc":"2.0","id":3,"result":{}}`), "application/json", 3); err != nil || string(m.ID) != "3" {
		t.Errorf("JSON body: %+v, %v", m, err)
	}
	if _, err := readAnswer(strings.NewReader(`{"jsonrpc":"2.0","id":4,"result":{}}`), "application/json", 3); err == nil {
		t.Error("an answer to another id was accepted")
	}
	if _, err := readAnswer(strings.NewReader(`x`), "text/html", 3); err == nil || !strings.Contains(err.Error(), "Content-Type") {
		t.Errorf("HTML: %v", err)
	}
}

func TestParseSchedstatAndCPUOf(t *testing.T) {
	if d, err := ParseSchedstat([]byte("123456789 55 7\n")); err != nil || d != 123456789 {
		t.Errorf("ParseSchedstat = %v, %v", d, err)
	}
	for _, bad := range []string{"", "1 2", "x 2 3", "-5 1 1"} {
		if _, err := ParseSchedstat([]byte(bad)); err == nil {
			t.Errorf("ParseSchedstat(%q) accepted", bad)
		}
	}
	root := t.TempDir()
	for tid, v := range map[string]string{"10": "1000 0 0", "11": "2500 0 0"} {
		dir := filepath.Join(root, "10", "task", tid)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "schedstat"), []byte(v+"\n"), 0o644)
	}
	if d, err := cpuOfRoot(root, 10); err != nil || d != 3500 {
		t.Errorf("cpuOfRoot = %v, %v; want the sum of the threads, 3500 ns", d, err)
	}
	if _, err := cpuOfRoot(root, 99); err == nil || !strings.Contains(err.Error(), "has it exited") {
		t.Errorf("a missing process: %v", err)
	}
	if d, err := CPUOf(os.Getpid()); err != nil || d <= 0 {
		t.Errorf("CPUOf(self) = %v, %v", d, err)
	}
}

// fakeWeb is the part of `agentapp web` that mcpbench web speaks to, and
// records the client addresses it saw.
func fakeWeb(t *testing.T, answer string) (string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var addrs []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("POST /api/sessions", func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		mu.Lock()
		addrs = append(addrs, host)
		n := len(addrs)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"w-%d","messages":[]}`, n)
	})
	mux.HandleFunc("POST /api/sessions/{id}/messages", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: session\ndata: {\"id\":%q}\n\n", r.PathValue("id"))
		fmt.Fprintf(w, "event: token\ndata: {\"text\":%q}\n\nevent: done\ndata: {}\n\n", answer)
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n")
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\ndata: [DONE]\n\n", answer)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(addrs) }
}

// TestMeasureWeb runs both APIs against a fake web server and checks that
// every session came from an address of its own and that answers are
// checked.
func TestMeasureWeb(t *testing.T) {
	base, addrs := fakeWeb(t, "已发货")
	for _, api := range []string{"chat", "v1"} {
		r, err := MeasureWeb(context.Background(), WebOptions{BaseURL: base, PID: os.Getpid(), API: api, Sessions: 20, Repeats: 2, Message: "A-1024?", Expect: "已发货"})
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		if r.FirstEventP50MS <= 0 || r.FirstTextP99MS < r.FirstEventP50MS || r.TurnsPerS <= 0 || r.RSSPeakMiB <= 0 {
			t.Errorf("%s: figures do not add up: %+v", api, r)
		}
	}
	// A warm-up run is made (its sessions created, its turns read) but
	// not timed: its cold first-event p99 is kept apart.
	r, err := MeasureWeb(context.Background(), WebOptions{BaseURL: base, PID: os.Getpid(), API: "chat", Sessions: 10, Repeats: 1, Warmup: 1, Message: "A-1024?", Expect: "已发货"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Warmup != 1 || r.Repeats != 1 || r.ColdFirstEventP99MS <= 0 || r.FirstEventP99MS <= 0 {
		t.Errorf("warm-up not recorded apart: %+v", r)
	}
	got := addrs()
	if len(got) != 60 {
		t.Fatalf("%d sessions created, want 60 (40, then 10 to warm up and 10 timed)", len(got))
	}
	slices.Sort(got)
	if u := slices.Compact(got); len(u) != 40 {
		// The second load's 20 sessions reuse the first load's first 20
		// addresses: one address per session within a load.
		t.Errorf("the sessions came from %d addresses, want one each (40): %v", len(u), u)
	}
	if _, err := MeasureWeb(context.Background(), WebOptions{BaseURL: base, PID: os.Getpid(), API: "chat", Sessions: 2, Expect: "取消"}); err == nil || !strings.Contains(err.Error(), "does not contain 取消") {
		t.Errorf("an answer without the expected text: %v", err)
	}
	if _, err := MeasureWeb(context.Background(), WebOptions{BaseURL: base, PID: os.Getpid(), API: "soap", Sessions: 2}); err == nil {
		t.Error("an unknown API was accepted")
	}
}

// TestMeasureHTTPConnectionsClosed runs a load on a server that ends
// connections under it: every third answer says Connection: close, and
// idle connections are dropped without a word after 30 ms (as Node's
// http server drops idle ones after 5 s). Every call is still made, each
// session on a connection of its own, and the requests that found their
// connection dropped are sent again and counted.
func TestMeasureHTTPConnectionsClosed(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "getOrderStatus"}, func(_ context.Context, _ *mcp.CallToolRequest, in orderIn) (*mcp.CallToolResult, orderOut, error) {
		return nil, orderOut{OrderID: in.OrderID, Status: "shipped"}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	var mu sync.Mutex
	n, conns := 0, 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		closeIt := n%3 == 0
		mu.Unlock()
		if closeIt {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	}))
	srv.Config.IdleTimeout = 30 * time.Millisecond
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	r, err := MeasureHTTP(context.Background(), HTTPOptions{
		Name: "closing", URL: srv.URL + "/mcp", PID: os.Getpid(), Sessions: 3, Calls: 30, Warmup: 1,
		Tool: "getOrderStatus", Args: json.RawMessage(`{"orderId":"A-1"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Calls != 90 {
		t.Errorf("%d calls measured, want 90", r.Calls)
	}
	mu.Lock()
	defer mu.Unlock()
	// A third of about 100 requests closed their connection: the load
	// must have opened new ones rather than failed or shared them.
	if conns < 30 {
		t.Errorf("%d connections for %d requests of which every third closed its own", conns, n)
	}
}
