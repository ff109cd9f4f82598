package stdiofast

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioConnDirectCalls drives a Conn by hand: the answer to a
// direct call goes to its caller and never to the SDK's reader, which
// still gets everything else (notifications, answers to integer ids) and
// not a late answer to a direct id; the request on the wire is the SDK's
// with a string id; when stdout ends, the call waiting fails as the SDK's
// calls do, and later calls fail at once with ErrConnectionClosed.
func TestStdioConnDirectCalls(t *testing.T) {
	outR, outW := io.Pipe() // the server's stdout
	inR, inW := io.Pipe()   // the server's stdin
	tr := &Transport{frames: supervise.NewFrameFilter("srv", outR, 0, slog.New(slog.DiscardHandler)), stdin: inW}
	mc, _ := tr.Connect(context.Background())
	c := mc.(*Conn)
	defer c.Close()
	seen := make(chan jsonrpc.Message, 16)
	readDone := make(chan error, 1)
	go func() { // the SDK's reader
		for {
			msg, err := c.Read(context.Background())
			if err != nil {
				readDone <- err
				return
			}
			seen <- msg
		}
	}()
	requests := bufio.NewReader(inR)
	server := make(chan string, 2)
	go func() {
		line, _ := requests.ReadString('\n')
		server <- line
		fmt.Fprint(outW, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`+"\n")
		fmt.Fprint(outW, `{"jsonrpc":"2.0","id":"agentapp-direct-1","result":{"content":[{"type":"text","text":"hi"}]}}`+"\n")
		fmt.Fprint(outW, `{"jsonrpc":"2.0","id":"agentapp-direct-99","result":{}}`+"\n")
		fmt.Fprint(outW, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
		line, _ = requests.ReadString('\n') // the second call, never answered
		server <- line
		outW.Close()
	}()
	// Bounded, so that a broken path fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"jsonrpc":"2.0","id":"agentapp-direct-1","method":"tools/call","params":{"name":"x","arguments":{}}}` + "\n"; <-server != want {
		t.Errorf("the request on the wire differs from\n%s", want)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hi" {
		t.Errorf("result %+v", res)
	}
	_, err = c.CallTool(ctx, &mcp.CallToolParams{Name: "y"})
	<-server
	if err == nil || err.Error() != `calling "tools/call": EOF` {
		t.Errorf("the call waiting when stdout ended: %v", err)
	}
	if err := <-readDone; !errors.Is(err, io.EOF) {
		t.Errorf("the SDK's reader ended with %v", err)
	}
	close(seen)
	var got []string
	for msg := range seen {
		b, _ := jsonrpc.EncodeMessage(msg)
		got = append(got, string(b))
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("what the SDK's reader got (-want +got):\n%s", d)
	}
	if _, err := c.CallTool(context.Background(), &mcp.CallToolParams{Name: "z"}); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("a call after stdout ended: %v; want ErrConnectionClosed", err)
	}
}
