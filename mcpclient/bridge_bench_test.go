package mcpclient

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoServer is the in-process twin of the test server's echo tool.
func echoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"echo": in.Text})
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: map[string]any{"echo": in.Text},
		}, nil
	})
	return srv
}

// BenchmarkBridgeCall measures the round trip of one adapted tool call
// (adapter → SDK → transport → server → back, result mapped), one at a time
// (p50 latency) and with 16 calls in flight (throughput), over stdio to a
// subprocess and in-process.
func BenchmarkBridgeCall(b *testing.B) {
	connectors := []struct {
		name    string
		connect func(b *testing.B) *Bridge
	}{
		{"stdio", func(b *testing.B) *Bridge {
			br, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", Command: testServerPath(b)})
			if err != nil {
				b.Fatal(err)
			}
			return br
		}},
		{"stdio-sdk-path", func(b *testing.B) *Bridge {
			// Every tools/call through the SDK's session: what the direct
			// path saves is the difference to "stdio".
			br, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", Command: testServerPath(b)}, withSDKToolCalls())
			if err != nil {
				b.Fatal(err)
			}
			return br
		}},
		{"inmemory", func(b *testing.B) *Bridge {
			br, err := ConnectInMemory(context.Background(), "mem", echoServer())
			if err != nil {
				b.Fatal(err)
			}
			return br
		}},
	}
	args := json.RawMessage(`{"text":"where is A-1024?"}`)
	for _, c := range connectors {
		b.Run(c.name+"/sequential", func(b *testing.B) {
			br := c.connect(b)
			defer br.Close()
			tool := benchTool(b, br)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := tool.Execute(context.Background(), args); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
		b.Run(c.name+"/16-in-flight", func(b *testing.B) {
			br := c.connect(b)
			defer br.Close()
			tool := benchTool(b, br)
			const inFlight = 16
			work := make(chan struct{})
			var wg sync.WaitGroup
			errs := make(chan error, inFlight)
			b.ResetTimer()
			start := time.Now()
			for range inFlight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var failed error
					for range work { // drain even after a failure, so the feeder never blocks
						if _, err := tool.Execute(context.Background(), args); err != nil && failed == nil {
							failed = err
						}
					}
					errs <- failed
				}()
			}
			for range b.N {
				work <- struct{}{}
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			close(errs)
			for err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
		})
	}
}

func benchTool(b *testing.B, br *Bridge) *agent.Tool {
	b.Helper()
	for _, t := range br.Tools() {
		if t.Name == "echo" {
			return t
		}
	}
	b.Fatal("no echo tool")
	return nil
}
