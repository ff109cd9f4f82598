package mcpserver

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/telemetry"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTracingStdioNext: with Tracing set, a 2026-07-28 tools/call whose
// _meta carries a trace context besides that generation's keys is
// answered on the direct path inside a server span that is the child of
// the client's span, with the bytes the SDK's path answers (which traces
// it too); one whose _meta also holds a progress token goes to the SDK's
// path.
func TestTracingStdioNext(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"traceparent":"` + traceparent + `","tracestate":"k=v"`
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":"abc"},` + meta + `}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":7},` + meta + `}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echoLen","arguments":{"text":"abcd"},` + meta + `,"progressToken":"p"}}}`,
	}
	var got [2][]string
	for i, direct := range []bool{false, true} {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		defer tp.Shutdown(context.Background())
		srv := New(&Options{Version: "test", Tools: []*agent.Tool{echoLenTool}, Tracing: telemetry.New(tp, nil), NoDirectCalls: !direct})
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ss, err := srv.Connect(context.Background(), srv.NewIOTransport(inR, outW), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			inW.Close()
			outR.Close()
			ss.Wait()
		})
		out := bufio.NewReader(outR)
		exchange := func(line string) string {
			t.Helper()
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := out.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		if r := exchange(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`); !strings.Contains(r, `"result"`) {
			t.Fatalf("server/discover: %s", r)
		}
		for _, line := range lines {
			got[i] = append(got[i], exchange(line))
		}
		want := int64(0)
		if direct {
			want = 2
		}
		if n := srv.taken.Load(); n != want {
			t.Errorf("direct path (on: %v) took %d calls, want %d", direct, n, want)
		}
		spans, fromDirect := 0, 0
		for _, sp := range rec.Ended() {
			if sp.Name() != "tools/call echoLen" {
				continue
			}
			spans++
			if sp.SpanContext().TraceID().String() != parentTrace || sp.Parent().SpanID().String() != parentSpan || !sp.Parent().IsRemote() {
				t.Errorf("span: trace %s parent %s, want the client's", sp.SpanContext().TraceID(), sp.Parent().SpanID())
			}
			for _, kv := range sp.Attributes() {
				if string(kv.Key) == "agentapp.mcp.direct" && kv.Value.AsBool() {
					fromDirect++
				}
			}
		}
		if spans != 3 || fromDirect != int(want) {
			t.Errorf("direct path (on: %v): %d tools/call spans, %d of them direct; want 3 and %d", direct, spans, fromDirect, want)
		}
	}
	for i := range lines {
		if got[0][i] != got[1][i] {
			t.Errorf("call %d answered differently:\nsdk    %s\ndirect %s", i+1, got[0][i], got[1][i])
		}
		if !strings.Contains(got[0][i], `"resultType":"complete"`) {
			t.Errorf("call %d: %s", i+1, got[0][i])
		}
	}
}
