package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerTimeout bounds the wait for the answers to one exchange. A
// server that dropped a request or its connection never answers, so
// the wait must end on its own.
const answerTimeout = 10 * time.Second

// probeRequest is one JSON-RPC request a prober sends; the prober gives
// it its id.
type probeRequest struct {
	method string
	params any
}

// prober sends requests to a server over one transport. exchange sends
// all of them and returns the answers in request order; it fails unless
// every request got exactly one answer that is valid JSON, carries the
// request's id and holds a result or an error.
type prober interface {
	exchange(reqs []probeRequest) ([]json.RawMessage, error)
}

// encodeRequest encodes one request line. Params that cannot be encoded
// (a json.RawMessage that is not JSON) are an error of the test input.
func encodeRequest(id int64, r probeRequest) ([]byte, error) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": r.method}
	if r.params != nil {
		msg["params"] = r.params
	}
	return json.Marshal(msg)
}

// checkAnswer checks that raw is one JSON-RPC response to id.
func checkAnswer(raw []byte, id int64) error {
	if !json.Valid(raw) {
		return fmt.Errorf("answer %q is not valid JSON", raw)
	}
	var resp struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return fmt.Errorf("answer %q is not a JSON-RPC response: %v", raw, err)
	}
	if resp.JSONRPC != "2.0" || string(resp.ID) != fmt.Sprint(id) || (resp.Result == nil) == (resp.Error == nil) {
		return fmt.Errorf("answer %q is not a JSON-RPC 2.0 response to id %d with a result or an error", raw, id)
	}
	return nil
}

// answerID reads the id of an answer, or -1.
func answerID(raw []byte) int64 {
	var v struct {
		ID *int64 `json:"id"`
	}
	if json.Unmarshal(raw, &v) != nil || v.ID == nil {
		return -1
	}
	return *v.ID
}

// stdioProber speaks raw newline-delimited JSON-RPC over a pair of pipes.
type stdioProber struct {
	in     io.Writer
	lines  <-chan []byte // every line the server writes; closed at its end
	nextID int64
}

// newStdioProber connects srv to transport over pipes and performs the
// handshake. The session ends when the test (or fuzz target) does.
func newStdioProber(tb testing.TB, srv *mcpserver.Server, transport rawTransport) *stdioProber {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), transport(srv, inR, outW), nil)
	if err != nil {
		tb.Fatal(err)
	}
	lines := make(chan []byte, 64)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	tb.Cleanup(func() {
		inW.Close()
		outR.Close()
		ss.Wait()
	})
	p := &stdioProber{in: inW, lines: lines, nextID: 1}
	if _, err := io.WriteString(inW, mcpserver.InitializeLine+"\n"); err != nil {
		tb.Fatal(err)
	}
	select {
	case line, ok := <-lines:
		if !ok || !bytes.Contains(line, []byte(`"result"`)) {
			tb.Fatalf("initialize: %q", line)
		}
	case <-time.After(answerTimeout):
		tb.Fatal("no answer to initialize")
	}
	if _, err := io.WriteString(inW, mcpserver.InitializedLine+"\n"); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (p *stdioProber) exchange(reqs []probeRequest) ([]json.RawMessage, error) {
	first := p.nextID
	p.nextID += int64(len(reqs))
	for i, r := range reqs {
		line, err := encodeRequest(first+int64(i), r)
		if err != nil {
			return nil, err
		}
		if _, err := p.in.Write(append(line, '\n')); err != nil {
			return nil, fmt.Errorf("sending %s: %v (the server stopped reading)", line, err)
		}
	}
	answers := make([]json.RawMessage, len(reqs))
	timeout := time.NewTimer(answerTimeout)
	defer timeout.Stop()
	for missing := len(reqs); missing > 0; {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return nil, fmt.Errorf("the server closed its output with %d of %d requests unanswered", missing, len(reqs))
			}
			id := answerID(line)
			if id < first || id >= first+int64(len(reqs)) || answers[id-first] != nil {
				return nil, fmt.Errorf("unexpected or repeated answer %q (ids %d to %d were asked)", line, first, first+int64(len(reqs))-1)
			}
			if err := checkAnswer(line, id); err != nil {
				return nil, err
			}
			answers[id-first] = bytes.TrimSpace(line)
			missing--
		case <-timeout.C:
			return nil, fmt.Errorf("%d of %d requests unanswered after %v", missing, len(reqs), answerTimeout)
		}
	}
	return answers, nil
}

// httpProber speaks streamable HTTP to one session.
type httpProber struct {
	url     string
	session string
	client  *http.Client
	nextID  int64
}

// newHTTPProber serves srv with NewHTTPHandler on a loopback port and
// opens a session.
func newHTTPProber(tb testing.TB, srv *mcpserver.Server) *httpProber {
	tb.Helper()
	ts := httptest.NewServer(newHTTPHandler(tb, srv, nil))
	tb.Cleanup(ts.Close)
	p := &httpProber{url: ts.URL + mcpserver.HTTPPath, client: &http.Client{Timeout: answerTimeout}, nextID: 1}
	status, header, _, err := p.post([]byte(mcpserver.InitializeLine))
	if err != nil || status != http.StatusOK || header.Get("Mcp-Session-Id") == "" {
		tb.Fatalf("initialize over HTTP: status %d, %v", status, err)
	}
	p.session = header.Get("Mcp-Session-Id")
	if status, _, _, err := p.post([]byte(mcpserver.InitializedLine)); err != nil || status != http.StatusAccepted {
		tb.Fatalf("notifications/initialized over HTTP: status %d, %v", status, err)
	}
	return p
}

// post sends one message and returns the JSON-RPC messages of the
// answer (the data of each event of an event stream, or a JSON body).
func (p *httpProber) post(body []byte) (int, http.Header, [][]byte, error) {
	req, err := http.NewRequest(http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := p.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, res.Header, nil, fmt.Errorf("reading the answer: %v", err)
	}
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		if len(bytes.TrimSpace(data)) == 0 {
			return res.StatusCode, res.Header, nil, nil
		}
		return res.StatusCode, res.Header, [][]byte{data}, nil
	}
	var msgs [][]byte
	for event := range strings.SplitSeq(string(data), "\n\n") {
		var payload []string
		for line := range strings.SplitSeq(event, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				payload = append(payload, strings.TrimPrefix(d, " "))
			}
		}
		if len(payload) > 0 {
			msgs = append(msgs, []byte(strings.Join(payload, "\n")))
		}
	}
	return res.StatusCode, res.Header, msgs, nil
}

func (p *httpProber) exchange(reqs []probeRequest) ([]json.RawMessage, error) {
	answers := make([]json.RawMessage, len(reqs))
	for i, r := range reqs {
		id := p.nextID
		p.nextID++
		line, err := encodeRequest(id, r)
		if err != nil {
			return nil, err
		}
		status, _, msgs, err := p.post(line)
		if err != nil {
			return nil, fmt.Errorf("POST %s: %v", line, err)
		}
		if status != http.StatusOK || len(msgs) != 1 {
			return nil, fmt.Errorf("POST %s: status %d with %d messages %q, want 200 with one answer", line, status, len(msgs), msgs)
		}
		if err := checkAnswer(msgs[0], id); err != nil {
			return nil, err
		}
		answers[i] = msgs[0]
	}
	return answers, nil
}

// probers returns a prober for srv on every transport a client can
// reach it by: the SDK's stdio transport, ours without and with the
// direct tools/call path, and streamable HTTP.
func probers(tb testing.TB, srv *mcpserver.Server) map[string]prober {
	ps := map[string]prober{"http": newHTTPProber(tb, srv)}
	for _, tr := range rawTransports {
		ps[tr.name] = newStdioProber(tb, srv, tr.make)
	}
	return ps
}

// pingRequest is the request after every exchange that shows the
// server is still answering.
var pingRequest = probeRequest{method: "ping"}

type wireError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func errorOf(t *testing.T, raw json.RawMessage) wireError {
	t.Helper()
	var v struct {
		Error *wireError `json:"error"`
	}
	if err := json.Unmarshal(raw, &v); err != nil || v.Error == nil {
		t.Fatalf("answer %s is not an error (%v)", raw, err)
	}
	return *v.Error
}

// sentAs returns s as a server receives it in a JSON request: encoding
// it replaces each byte of invalid UTF-8 with U+FFFD.
func sentAs(s string) string {
	b, _ := json.Marshal(s)
	var back string
	_ = json.Unmarshal(b, &back)
	return back
}

// TestControlCharactersAreAnswered sends requests whose URI or tool name
// holds characters Go's %q writes as \x or \U escapes, which are not JSON.
// Each must get a well-formed error, and the server must go on answering.
func TestControlCharactersAreAnswered(t *testing.T) {
	d := newDomain(t)
	srv := mcpserver.New(d.options())
	uris := []string{
		"docs://kb/\x01",
		"docs://kb/\x1b[31m",
		"docs://kb/\x7f",
		"docs://kb/\U000E0001tag",
		"docs://kb/\xff\xfe",
		"docs://other/\x00",
		"\U000E0041",
	}
	names := []string{"\x01", "get\x7fOrderStatus", "\U000E0001", strings.Repeat("\x02", 5000)}
	for pname, p := range probers(t, srv) {
		t.Run(pname, func(t *testing.T) {
			for _, uri := range uris {
				answers, err := p.exchange([]probeRequest{{method: "resources/read", params: map[string]any{"uri": uri}}, pingRequest})
				if err != nil {
					t.Fatalf("resources/read %q: %v", uri, err)
				}
				e := errorOf(t, answers[0])
				var data struct {
					URI string `json:"uri"`
				}
				if e.Code != mcp.CodeResourceNotFound || e.Message != "Resource not found" || json.Unmarshal(e.Data, &data) != nil ||
					data.URI != sentAs(uri) {
					t.Errorf("resources/read %q: %s, want resource-not-found with the URI as data", uri, answers[0])
				}
			}
			for _, name := range names {
				answers, err := p.exchange([]probeRequest{{method: "tools/call", params: map[string]any{"name": name, "arguments": map[string]any{}}}, pingRequest})
				if err != nil {
					t.Fatalf("tools/call %q: %v", name, err)
				}
				e := errorOf(t, answers[0])
				if want := "unknown tool " + mcpserver.Quote(name); e.Code != -32602 || e.Message != want {
					t.Errorf("tools/call %q: %s, want invalid params %q", name, answers[0], want)
				}
			}
		})
	}
}

// FuzzServerAnswersEveryRequest sends arbitrary URIs, tool names and
// arguments over stdio (the SDK's transport is not among them: it is not
// what `agentapp serve` runs) and streamable HTTP, and requires one valid
// JSON answer to every request and a server that still answers a ping.
func FuzzServerAnswersEveryRequest(f *testing.F) {
	for _, s := range []struct {
		uri, name, args string
	}{
		{"docs://kb/\x01", "\x01", `{}`},
		{"docs://kb/\U000E0001", "\U000E0001", `{"orderId":"\u0001"}`},
		{"docs://kb/\x7f", "getOrderStatus", `{"orderId":"A-1024"}`},
		{"docs://kb/%01", "getOrderStatus", `{"orderId":"\u007f"}`},
		{"\x00", "searchKnowledge", `{"query":"\udb40\udc01"}`},
		{"docs://kb/a%2Fb", "", `[1,2]`},
		{"", "createTicket", "not json \x01"},
		{"docs://kb/\xff", "\xff", `null`},
	} {
		f.Add(s.uri, s.name, []byte(s.args))
	}
	d := newDomain(f)
	srv := mcpserver.New(d.options())
	transports := map[string]prober{"http": newHTTPProber(f, srv)}
	for _, tr := range rawTransports {
		if tr.name != "sdk" {
			transports[tr.name] = newStdioProber(f, srv, tr.make)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range transports {
			if !yield(n) {
				return
			}
		}
	})
	f.Fuzz(func(t *testing.T, uri, name string, args []byte) {
		arguments := json.RawMessage(args)
		if !json.Valid(args) {
			arguments, _ = json.Marshal(string(args))
		}
		reqs := []probeRequest{
			{method: "resources/read", params: map[string]any{"uri": uri}},
			{method: "resources/read", params: map[string]any{"uri": mcpserver.DocURIPrefix + uri}},
			{method: "tools/call", params: map[string]any{"name": name, "arguments": arguments}},
			{method: "tools/call", params: map[string]any{"name": "getOrderStatus", "arguments": arguments}},
			{method: "prompts/get", params: map[string]any{"name": name}},
			pingRequest,
		}
		for _, n := range names {
			if _, err := transports[n].exchange(reqs); err != nil {
				t.Fatalf("%s: %v", n, err)
			}
		}
	})
}

// TestWireSafeErrors checks that errors a handler makes unsendable are
// repaired with their code kept: here the caller's middleware returns
// data that is not JSON, and a message far too long. It runs inside the
// server's recovery too: its panic is an internal error.
func TestWireSafeErrors(t *testing.T) {
	long := strings.Repeat("é", 100_000)
	srv := mcpserver.New(&mcpserver.Options{Middleware: []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "tools/list":
				return nil, &jsonrpc.Error{Code: -32099, Message: "bad data", Data: json.RawMessage(`{"uri":"\x01"}`)}
			case "resources/templates/list":
				return nil, fmt.Errorf("wrapped: %w: %s", &jsonrpc.Error{Code: -32098, Message: "inner"}, long)
			case "prompts/list":
				panic("middleware exploded")
			}
			return next(ctx, method, req)
		}
	}}})
	for pname, p := range probers(t, srv) {
		t.Run(pname, func(t *testing.T) {
			answers, err := p.exchange([]probeRequest{{method: "tools/list"}, {method: "resources/templates/list"}, {method: "prompts/list"}, pingRequest})
			if err != nil {
				t.Fatal(err)
			}
			if e := errorOf(t, answers[0]); e.Code != -32099 || e.Message != "bad data" || e.Data != nil {
				t.Errorf("invalid data: %s, want code -32099 without data", answers[0])
			}
			e := errorOf(t, answers[1])
			if e.Code != -32098 || !strings.HasPrefix(e.Message, "wrapped: inner: éé") || !strings.HasSuffix(e.Message, "é…") || len(e.Message) > 1024 {
				t.Errorf("long message: code %d, %d bytes %.40q…, want code -32098 and at most 1024 bytes ending in an ellipsis", e.Code, len(e.Message), e.Message)
			}
			if e := errorOf(t, answers[2]); e.Code != jsonrpc.CodeInternalError {
				t.Errorf("panicking middleware: %s, want an internal error", answers[2])
			}
		})
	}
}

// TestHTTPAnswersAreJSON: over streamable HTTP a request's answer is one
// application/json body, not an event stream (http.go says why), for
// tools/call and the other requests alike.
func TestHTTPAnswersAreJSON(t *testing.T) {
	d := newDomain(t)
	p := newHTTPProber(t, mcpserver.New(d.options()))
	for i, body := range []string{
		`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"noSuchTool","arguments":{}}}`,
	} {
		status, header, msgs, err := p.post([]byte(body))
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: status %d, %v", body, status, err)
		}
		if ct := header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q, want application/json", body, ct)
		}
		if len(msgs) != 1 {
			t.Fatalf("%s: %d messages, want 1", body, len(msgs))
		}
		if err := checkAnswer(msgs[0], int64(10+i)); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
