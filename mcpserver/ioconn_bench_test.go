package mcpserver

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/lineread"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// benchCallLine is a tools/call as a client sends it to `agentapp serve`.
const benchCallLine = `{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}`

// BenchmarkDecodeCall is what the reader does with a tools/call line before
// the tool runs: decode the envelope and match the direct path's tool.
func BenchmarkDecodeCall(b *testing.B) {
	line := []byte(benchCallLine)
	s := &Server{tools: map[string]*agent.Tool{"getOrderStatus": {Name: "getOrderStatus"}}}
	var c lineConn
	b.ReportAllocs()
	for b.Loop() {
		msgs, answer := c.decodeLine(line)
		if len(msgs) != 1 || answer != nil {
			b.Fatalf("%v %s", msgs, answer)
		}
		if t, args := s.matchDirect(msgs[0].(*jsonrpc.Request)); t == nil || len(args) == 0 {
			b.Fatal("not matched")
		}
	}
}

// BenchmarkReadLine frames the input into lines as readLines does, each
// line in its own backing array.
func BenchmarkReadLine(b *testing.B) {
	lr := lineread.NewReader(bufio.NewReaderSize(&testkit.RepeatReader{Data: []byte(benchCallLine + "\n")}, 64<<10), 1<<20, 0)
	b.ReportAllocs()
	for b.Loop() {
		line, err := lr.ReadLine()
		line = bytes.Clone(line)
		if err != nil || lr.TooLong() || len(line) != len(benchCallLine) {
			b.Fatalf("%q %v", line, err)
		}
	}
}
