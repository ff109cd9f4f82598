package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
)

// TestIOTransportAnswersBeforeEOF writes requests and closes the input
// at once, as `printf … | agentapp serve` does, and checks that every
// request is answered before the session ends.
func TestIOTransportAnswersBeforeEOF(t *testing.T) {
	release := make(chan struct{})
	slow := &agent.Tool{
		Name: "slow", Description: "Answers once released.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			select {
			case <-release:
				return map[string]string{"ok": "yes"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tools: []*agent.Tool{slow}})
	pr, inW := io.Pipe()
	inR := &eofSignal{ReadCloser: pr, eof: make(chan struct{})}
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), &mcpserver.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`+"\n")
		inW.Close() // EOF while tools/call is still running
	}()
	lines := bufio.NewScanner(outR)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
		if len(got) == 1 {
			<-inR.eof      // the server has read the end of its input…
			close(release) // …and only then may the call finish
		}
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	if len(got) != 2 || !strings.Contains(got[1], `"id":2`) || !strings.Contains(got[1], `"ok":"yes"`) {
		t.Fatalf("responses: %q", got)
	}
	<-waitErr
	outR.Close()
}

// eofSignal closes eof when its reader reports the end of input.
type eofSignal struct {
	io.ReadCloser
	eof  chan struct{}
	once sync.Once
}

func (r *eofSignal) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if err == io.EOF {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}
