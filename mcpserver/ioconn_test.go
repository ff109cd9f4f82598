package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineSession is a server on IOTransport over pipes; the test writes
// raw bytes and reads raw response lines.
type lineSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
	ss  *mcp.ServerSession
}

// echoLenTool answers with the number of bytes of its "text" argument, so a
// test can send large lines and check they arrived whole.
var echoLenTool = &agent.Tool{
	Name: "echoLen", Description: "Counts the bytes of text.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
	Validate:    true,
	Execute: func(_ context.Context, args json.RawMessage) (any, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return map[string]int{"bytes": len(a.Text)}, nil
	},
}

func newLineSession(t *testing.T, maxLine int) *lineSession {
	t.Helper()
	srv := New(&Options{Version: "test", Tools: []*agent.Tool{echoLenTool}})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(),
		&IOTransport{Reader: inR, Writer: outW, MaxLineLength: maxLine}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &lineSession{t: t, in: inW, out: bufio.NewReaderSize(outR, 1<<20), ss: ss}
	t.Cleanup(func() {
		inW.Close()
		// Unread answers would block the server's writes, and Wait with
		// them, after a failed test: close the reading end first.
		outR.Close()
		ss.Wait()
	})
	return s
}

func (s *lineSession) write(raw string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, raw); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// next reads one response line and decodes it.
func (s *lineSession) next() map[string]any {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("read a response: %v (got %q)", err, line)
	}
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		s.t.Fatalf("response %q is not a JSON object: %v", line, err)
	}
	return v
}

func (s *lineSession) handshake() {
	s.t.Helper()
	s.write(InitializeLine + "\n")
	if r := s.next(); r["result"] == nil {
		s.t.Fatalf("initialize: %v", r)
	}
	s.write(InitializedLine + "\n")
}

func callLine(id any, text string) string {
	idJSON, _ := json.Marshal(id)
	textJSON, _ := json.Marshal(text)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":%s}}}`, idJSON, textJSON)
}

// wantBytes checks that r answers request id with echoLen's count n.
func wantBytes(t *testing.T, r map[string]any, id any, n int) {
	t.Helper()
	if fmt.Sprint(r["id"]) != fmt.Sprint(id) {
		t.Fatalf("response id %v, want %v: %v", r["id"], id, r)
	}
	res, _ := r["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	if got, _ := sc["bytes"].(float64); int(got) != n || res["isError"] == true {
		t.Fatalf("response to %v: %v, want bytes=%d", id, r, n)
	}
}

// wantError checks that r is an error response with code and id.
func wantError(t *testing.T, r map[string]any, id any, code int) {
	t.Helper()
	e, _ := r["error"].(map[string]any)
	if e == nil || int(e["code"].(float64)) != code || fmt.Sprint(r["id"]) != fmt.Sprint(id) {
		t.Fatalf("got %v, want an error %d with id %v", r, code, id)
	}
	if r["jsonrpc"] != "2.0" || e["message"] == "" {
		t.Fatalf("error response %v lacks its version or message", r)
	}
}

func TestIOTransportFraming(t *testing.T) {
	s := newLineSession(t, 0)
	s.handshake()
	// Two messages in one write, CRLF line endings, blank lines between,
	// and one message split over three writes.
	s.write(callLine(1, "a") + "\r\n\n" + callLine(2, "bb") + "\n   \n")
	// The server handles the two at once; their answers come in either
	// order.
	seen := map[int]bool{}
	for range 2 {
		r := s.next()
		id := int(r["id"].(float64))
		wantBytes(t, r, id, id)
		seen[id] = true
	}
	if !seen[1] || !seen[2] {
		t.Fatalf("answered ids %v, want 1 and 2", seen)
	}
	line := callLine("x\"y", "ccc")
	s.write(line[:10])
	s.write(line[10:40])
	s.write(line[40:] + "\n")
	wantBytes(t, s.next(), "x\"y", 3)
}

func TestIOTransportLongLines(t *testing.T) {
	const limit = 4096
	s := newLineSession(t, limit)
	s.handshake()
	pad := limit - len(callLine(10, ""))
	atLimit := callLine(10, strings.Repeat("z", pad))
	if len(atLimit) != limit {
		t.Fatalf("test line is %d bytes, want %d", len(atLimit), limit)
	}
	s.write(atLimit + "\r\n") // the line ending does not count
	wantBytes(t, s.next(), 10, pad)
	// Over the limit, the answer says by how much.
	for _, ending := range []string{"\n", "\r\n"} {
		s.write(callLine(11, strings.Repeat("z", pad+1)) + ending)
		r := s.next()
		wantError(t, r, nil, jsonrpc.CodeInvalidRequest)
		want := fmt.Sprintf("invalid request: the line is %d bytes long, over the %d-byte limit; send smaller messages", limit+1, limit)
		if msg := r["error"].(map[string]any)["message"]; msg != want {
			t.Errorf("message %q, want %q", msg, want)
		}
	}
	s.write(callLine(12, "ok") + "\n") // the session goes on
	wantBytes(t, s.next(), 12, 2)

	// With the default limit, a line far larger than the read buffer.
	big := newLineSession(t, 0)
	big.handshake()
	big.write(callLine(1, strings.Repeat("é", 300_000)) + "\n")
	wantBytes(t, big.next(), 1, 600_000)
}

func TestIOTransportMalformedLines(t *testing.T) {
	s := newLineSession(t, 0)
	s.handshake()
	cases := []struct {
		line string
		id   any
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call"`, nil, jsonrpc.CodeParseError},
		{`not json`, nil, jsonrpc.CodeParseError},
		{`42`, nil, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":7,"method":"ping"}`, 7, jsonrpc.CodeInvalidRequest},
		{`{"id":8,"method":"ping"}`, 8, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":9,"method":5}`, 9, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, nil, jsonrpc.CodeInvalidRequest},
		{`{"jsonrpc":"2.0","result":{}}`, nil, jsonrpc.CodeInvalidRequest},
		{`[]`, nil, jsonrpc.CodeInvalidRequest},
	}
	for _, c := range cases {
		s.write(c.line + "\n")
		wantError(t, s.next(), c.id, c.code)
	}
	s.write(callLine(20, "still here") + "\n")
	wantBytes(t, s.next(), 20, 10)
}

func TestIOTransportBatch(t *testing.T) {
	s := newLineSession(t, 0)
	s.handshake()
	s.write("[" + callLine(1, "a") + `,{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}},` +
		`{"jsonrpc":"1.0","id":5,"method":"ping"},` + callLine(2, "bb") + "]\n")
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	var answers []map[string]any
	if err := json.Unmarshal(line, &answers); err != nil {
		t.Fatalf("batch answer %q: %v", line, err)
	}
	if len(answers) != 3 {
		t.Fatalf("batch answer has %d responses, want 3: %s", len(answers), line)
	}
	wantBytes(t, answers[0], 1, 1)
	wantError(t, answers[1], 5, jsonrpc.CodeInvalidRequest)
	wantBytes(t, answers[2], 2, 2)

	// A batch of notifications only gets no answer: the next line read is
	// the answer to the call after it.
	s.write(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]` + "\n" + callLine(3, "ccc") + "\n")
	wantBytes(t, s.next(), 3, 3)
}

// TestIOTransportEOFAnswersAll writes requests, the last without a
// line ending, and closes the input at once: every request is answered
// before the session ends.
func TestIOTransportEOFAnswersAll(t *testing.T) {
	s := newLineSession(t, 0)
	s.handshake()
	s.write(callLine(1, "a") + "\n" + callLine(2, "bb"))
	s.in.Close()
	got := map[string]bool{}
	for range 2 {
		r := s.next()
		got[fmt.Sprint(r["id"])] = r["result"] != nil
	}
	if !got["1"] || !got["2"] {
		t.Fatalf("answers: %v", got)
	}
	if err := s.ss.Wait(); err != nil && !errors.Is(err, io.EOF) {
		t.Logf("session ended with %v", err)
	}
}

// TestIOTransportCloseEndsRead checks the Connection contract: Close
// ends a Read waiting for input that never comes.
func TestIOTransportCloseEndsRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	_, outW := io.Pipe()
	conn, err := (&IOTransport{Reader: inR, Writer: outW}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("Read returned no error after Close")
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestIOTransportMessages checks the envelope decoding against the
// SDK's own decoder on messages of every shape a server receives.
func TestIOTransportMessages(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":"}"}]}}}`,
		` { "params" : { "s" : "a\"]}" } , "method" : "m\u00e9" , "id" : "k\\1" , "jsonrpc" : "2.0" } `,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-4,"result":{"roots":[]}}`,
		`{"jsonrpc":"2.0","id":"r","error":{"code":-32601,"message":"no","data":{"x":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","id":6,"method":""}`,
	}
	for _, line := range lines {
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("the SDK rejects %s: %v", line, err)
		}
		c := &lineConn{}
		msgs, answer := c.decodeLine([]byte(line))
		if answer != nil || len(msgs) != 1 {
			t.Fatalf("%s: answered %s, %d messages", line, answer, len(msgs))
		}
		gotWire, err := jsonrpc.EncodeMessage(msgs[0])
		if err != nil {
			t.Fatal(err)
		}
		wantWire, _ := jsonrpc.EncodeMessage(want)
		if string(gotWire) != string(wantWire) {
			t.Errorf("%s:\n got  %s\n want %s", line, gotWire, wantWire)
		}
	}
}

// TestEncodeMessageMatchesSDK checks the direct encoding of responses
// against the SDK's encoder.
func TestEncodeMessageMatchesSDK(t *testing.T) {
	id1, _ := jsonrpc.MakeID(float64(12))
	id2, _ := jsonrpc.MakeID("a\"<b>")
	msgs := []jsonrpc.Message{
		&jsonrpc.Response{ID: id1, Result: json.RawMessage(`{"content":[{"type":"text","text":"é\u2028"}]}`)},
		&jsonrpc.Response{ID: id2, Result: json.RawMessage(`{}`)},
		&jsonrpc.Response{ID: id1, Error: &jsonrpc.Error{Code: -32602, Message: "bad"}},
		&jsonrpc.Response{ID: id1, Result: json.RawMessage("{\n\"a\": 1}")},
		&jsonrpc.Request{Method: "notifications/message", Params: json.RawMessage(`{"level":"info"}`)},
	}
	for _, m := range msgs {
		got, err := encodeMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := jsonrpc.EncodeMessage(m)
		var g, w any
		if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil || fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("encoded %s, the SDK %s", got, want)
		}
		if strings.ContainsAny(string(got), "\n\r") {
			t.Errorf("encoded %q holds a line break", got)
		}
	}
}

// TestIOTransportConcurrentWrites sends many calls without waiting
// and checks every answer is a whole line with a distinct id.
func TestIOTransportConcurrentWrites(t *testing.T) {
	s := newLineSession(t, 0)
	s.handshake()
	const n = 200
	go func() {
		var b strings.Builder
		for i := range n {
			b.WriteString(callLine(i, strings.Repeat("q", i)) + "\n")
		}
		io.WriteString(s.in, b.String())
	}()
	seen := map[int]bool{}
	deadline := time.Now().Add(time.Minute) // guards a hang, asserts nothing about speed
	for len(seen) < n && time.Now().Before(deadline) {
		r := s.next()
		id := int(r["id"].(float64))
		wantBytes(t, r, id, id)
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct answers, want %d", len(seen), n)
	}
}

// TestIOTransportWritesUnencodableErrorsSafely: an error response whose
// data is not valid JSON (as go-sdk's ResourceNotFoundError builds it for a
// URI with a control character) is still answered, for its id, with valid
// JSON, and the connection stays usable. Raised before any middleware, such
// an error would otherwise fail the write and end the session.
func TestIOTransportWritesUnencodableErrorsSafely(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	var out bytes.Buffer
	conn, err := (&IOTransport{Reader: inR, Writer: nopWriteCloser{&out}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	id, _ := jsonrpc.MakeID(float64(7))
	bad := &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: -32002, Message: "Resource not found", Data: json.RawMessage(`{"uri":"docs://kb/` + "\\x01" + `"}`)}}
	if err := conn.Write(context.Background(), bad); err != nil {
		t.Fatalf("Write: %v (the session would end here)", err)
	}
	ok := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{}`)}
	if err := conn.Write(context.Background(), ok); err != nil {
		t.Fatalf("a Write after the bad one: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %q, want two lines", out.String())
	}
	var got struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil || got.ID != 7 || got.Error.Code != -32002 {
		t.Errorf("error answer %s: %+v, %v; want valid JSON for id 7 with code -32002", lines[0], got, err)
	}
}

// TestIOTransportRefusesIDsItCannotEcho: ids are echoed in answers, so an
// id the SDK's jsonrpc.ID would change (a fraction, an exponent, an integer
// past 2^53, -0) is refused with -32600 rather than answered under another
// number, and a request with a null id is refused rather than taken for a
// notification and never answered.
func TestIOTransportRefusesIDsItCannotEcho(t *testing.T) {
	for _, id := range []string{"1.5", "3.0", "1e29", "1E2", "9007199254740993", "-9007199254740993", "-0", "null"} {
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		c := &lineConn{}
		msgs, answer := c.decodeLine([]byte(line))
		var got struct {
			ID    any `json:"id"`
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if len(msgs) != 0 || json.Unmarshal(answer, &got) != nil || got.ID != nil || got.Error.Code != -32600 {
			t.Errorf("id %s: %d messages, answer %s; want no message and a -32600 error for id null", id, len(msgs), answer)
		}
	}
	for _, id := range []string{"0", "-4", "9007199254740992", "-9007199254740992", `"1.5"`} {
		line := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`
		c := &lineConn{}
		msgs, answer := c.decodeLine([]byte(line))
		if answer != nil || len(msgs) != 1 {
			t.Fatalf("id %s: answered %s", id, answer)
		}
		wire, _ := jsonrpc.EncodeMessage(msgs[0])
		if !strings.Contains(string(wire), `"id":`+id+`,`) {
			t.Errorf("id %s is re-encoded as %s", id, wire)
		}
	}
}
