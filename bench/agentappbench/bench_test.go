package agentappbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/bench/mcpbench"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var orderArgs = json.RawMessage(`{"orderId":"A-1024"}`)

var quiet = slog.New(slog.DiscardHandler)

// newServer builds the server `agentapp serve` builds, on a fresh data
// directory: the same tools, the same seeded knowledge base.
func newServer(b *testing.B) *mcpserver.Server {
	b.Helper()
	return mcpserver.New(serverOptions(b))
}

// server is an MCP server this process runs: ours or the SDK's bare one.
type server interface {
	Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
}

// newServerDirect is newServer with the direct tools/call path `agentapp
// serve` adds to its stdio transport.
func newServerDirect(b *testing.B) (*mcpserver.Server, func(io.ReadCloser, io.WriteCloser) mcp.Transport) {
	b.Helper()
	srv := newServer(b)
	return srv, func(r io.ReadCloser, w io.WriteCloser) mcp.Transport { return srv.NewIOTransport(r, w) }
}

// serverOptions are `agentapp serve`'s server options on a fresh data
// directory.
func serverOptions(b *testing.B) *mcpserver.Options {
	b.Helper()
	ctx := context.Background()
	st, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc, err := support.New(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	k, err := kb.Open(ctx, st)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.SeedDemo(ctx); err != nil {
		b.Fatal(err)
	}
	opts := assistant.ServerOptions(svc, k, "bench")
	opts.Logger = quiet
	return opts
}

func toolNamed(b *testing.B, br *mcpclient.Bridge, name string) *agent.Tool {
	for _, t := range br.Tools() {
		if t.Name == name {
			return t
		}
	}
	b.Fatalf("%s has no tool %s", br.Name(), name)
	return nil
}

// runTool is one bridge round trip as the agent loop makes it: the
// adapted tool's Execute (call, result mapping).
func runTool(b *testing.B, t *agent.Tool) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.Execute(ctx, orderArgs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBridgeInProcess: agentapp's server in this process behind the
// SDK's in-memory transport; one op is one getOrderStatus through the
// bridge's adapted tool.
func BenchmarkBridgeInProcess(b *testing.B) {
	br, err := mcpclient.ConnectInMemory(context.Background(), "agentapp", newServer(b), mcpclient.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	runTool(b, toolNamed(b, br, "getOrderStatus"))
}

// BenchmarkBridgeStdio: the same call to `agentapp serve` as a subprocess.
// The profile of this benchmark shows the client side only.
func BenchmarkBridgeStdio(b *testing.B) {
	bin := agentappBinary(b)
	br, err := mcpclient.Connect(context.Background(), mcpconfig.Server{
		Name: "agentapp", Command: bin, Args: []string{"--data-dir", b.TempDir(), "serve"},
	}, mcpclient.WithLogger(quiet))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	runTool(b, toolNamed(b, br, "getOrderStatus"))
}

// BenchmarkServerToolsCallRaw: agentapp's server alone, connected like
// `agentapp serve` (mcpserver's stdio transport with the direct tools/call
// path, newline-delimited JSON over OS pipes), driven by the harness's raw
// JSON-RPC framing. Nearly all of the CPU profile of this benchmark is the
// server's handling of tools/call.
func BenchmarkServerToolsCallRaw(b *testing.B) {
	server, transport := newServerDirect(b)
	benchRaw(b, server, transport, "getOrderStatus", orderArgs, `"structuredContent"`)
}

// BenchmarkServerToolsCallRawSDKPath is the same without the direct path:
// every call goes through the SDK's request handling. The difference to
// BenchmarkServerToolsCallRaw is what the direct tools/call path saves.
func BenchmarkServerToolsCallRawSDKPath(b *testing.B) {
	benchRaw(b, newServer(b), ioTransport, "getOrderStatus", orderArgs, `"structuredContent"`)
}

// BenchmarkServerToolsCallRawSDKTransport is the same server on the SDK's
// IOTransport, which `agentapp serve` used first: the difference to
// BenchmarkServerToolsCallRawSDKPath is what mcpserver.IOTransport
// saves.
func BenchmarkServerToolsCallRawSDKTransport(b *testing.B) {
	benchRaw(b, newServer(b), sdkTransport, "getOrderStatus", orderArgs, `"structuredContent"`)
}

// BenchmarkServerToolsCallRawPipelined is BenchmarkServerToolsCallRaw
// with 16 calls in flight, as in the harness's throughput phase: the
// per-call cost when the server never waits for its client.
func BenchmarkServerToolsCallRawPipelined(b *testing.B) {
	server, transport := newServerDirect(b)
	benchRawPipelined(b, server, transport, "getOrderStatus", orderArgs, 16)
}

// BenchmarkServerToolsCallRawPipelinedSDKPath is the pipelined benchmark
// without the direct path.
func BenchmarkServerToolsCallRawPipelinedSDKPath(b *testing.B) {
	benchRawPipelined(b, newServer(b), ioTransport, "getOrderStatus", orderArgs, 16)
}

func ioTransport(r io.ReadCloser, w io.WriteCloser) mcp.Transport {
	return &mcpserver.IOTransport{Reader: r, Writer: w}
}

func sdkTransport(r io.ReadCloser, w io.WriteCloser) mcp.Transport {
	return &mcp.IOTransport{Reader: r, Writer: w}
}

// BenchmarkSDKEchoRaw is the floor under the previous benchmark: a bare Go
// SDK server with one trivial echo tool (typed input, so the SDK infers
// and checks its schema, as zod does for the TypeScript echo), over the
// same pipes with the same client. What BenchmarkServerToolsCallRaw costs
// above this is agentapp's own.
func BenchmarkSDKEchoRaw(b *testing.B) {
	benchRaw(b, newEchoServer(), sdkTransport, "echo", json.RawMessage(`{"message":"hi"}`), `"Echo: hi"`)
}

// BenchmarkSDKEchoRawIOTransport is the bare SDK echo server on
// mcpserver's stdio transport: what the SDK still costs per call once the
// transport's decoding is ours (its params decoding, request goroutine,
// result encoding), with a tool that does nothing.
func BenchmarkSDKEchoRawIOTransport(b *testing.B) {
	benchRaw(b, newEchoServer(), ioTransport, "echo", json.RawMessage(`{"message":"hi"}`), `"Echo: hi"`)
}

func newEchoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "echo", Version: "1"}, &mcp.ServerOptions{Logger: quiet})
	type echoIn struct {
		Message string `json:"message" jsonschema:"message to echo"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes back the input string"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	return srv
}

// connectOverPipes connects srv over two OS pipes with transport and
// returns the client's ends: where to write requests, where to read
// answers, and a function that ends the session and closes the pipes.
func connectOverPipes(b *testing.B, srv server, transport func(io.ReadCloser, io.WriteCloser) mcp.Transport) (io.Writer, *bufio.Reader, func()) {
	b.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.Connect(ctx, transport(inR, outW), nil)
	if err != nil {
		b.Fatal(err)
	}
	stop := func() {
		inW.Close()
		cancel()
		_ = ss.Wait()
		outR.Close()
	}
	return inW, bufio.NewReaderSize(outR, 64<<10), stop
}

func benchRaw(b *testing.B, srv server, transport func(io.ReadCloser, io.WriteCloser) mcp.Transport,
	tool string, args json.RawMessage, want string) {
	inW, br, stop := connectOverPipes(b, srv, transport)
	defer stop()
	var buf []byte
	id := int64(0)
	call := func(method string, params json.RawMessage) []byte {
		id++
		buf = mcpbench.AppendRequest(buf[:0], id, method, params)
		if _, err := inW.Write(buf); err != nil {
			b.Fatal(err)
		}
		frame, err := mcpbench.ReadFrame(br, mcpbench.MaxFrame)
		if err != nil {
			b.Fatal(err)
		}
		return frame
	}
	call("initialize", mcpbench.InitializeParams)
	if _, err := inW.Write(mcpbench.AppendNotification(nil, "notifications/initialized", nil)); err != nil {
		b.Fatal(err)
	}
	params, err := mcpbench.ToolsCallParams(tool, args)
	if err != nil {
		b.Fatal(err)
	}
	if f := call("tools/call", params); !bytes.Contains(f, []byte(want)) {
		b.Fatalf("unexpected answer %s", f)
	}
	b.ReportAllocs()
	for b.Loop() {
		call("tools/call", params)
	}
}

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

// agentappBinary returns $AGENTAPP_BIN or a freshly built cmd/agentapp.
func agentappBinary(b *testing.B) string {
	if p := os.Getenv("AGENTAPP_BIN"); p != "" {
		return p
	}
	build.once.Do(func() {
		goTool, err := exec.LookPath("go")
		if err != nil {
			build.err = err
			return
		}
		if build.dir, build.err = os.MkdirTemp("", "agentappbench-*"); build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "agentapp")
		// Built in the repository's own module: the bench module's go.sum
		// holds only what the harness imports, not agentapp's every
		// dependency.
		cmd := exec.Command(goTool, "build", "-o", build.bin, "./cmd/agentapp")
		cmd.Dir = filepath.Join("..", "..")
		build.out, build.err = cmd.CombinedOutput()
	})
	if build.err != nil {
		b.Skipf("cannot build agentapp (set AGENTAPP_BIN): %v\n%s", build.err, build.out)
	}
	return build.bin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// benchRawPipelined keeps inflight tools/call requests outstanding on one
// connection; one op is one answered call.
func benchRawPipelined(b *testing.B, srv server, transport func(io.ReadCloser, io.WriteCloser) mcp.Transport,
	tool string, args json.RawMessage, inflight int) {
	inW, br, stop := connectOverPipes(b, srv, transport)
	defer stop()
	if _, err := inW.Write(mcpbench.AppendRequest(nil, 0, "initialize", mcpbench.InitializeParams)); err != nil {
		b.Fatal(err)
	}
	if _, err := mcpbench.ReadFrame(br, mcpbench.MaxFrame); err != nil {
		b.Fatal(err)
	}
	if _, err := inW.Write(mcpbench.AppendNotification(nil, "notifications/initialized", nil)); err != nil {
		b.Fatal(err)
	}
	params, err := mcpbench.ToolsCallParams(tool, args)
	if err != nil {
		b.Fatal(err)
	}
	// The writer may run ahead by inflight requests; each answer read
	// lets one more go.
	credits := make(chan struct{}, inflight)
	for range inflight {
		credits <- struct{}{}
	}
	n := b.N
	writeErr := make(chan error, 1)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		var buf []byte
		for id := int64(1); id <= int64(n); id++ {
			<-credits
			buf = mcpbench.AppendRequest(buf[:0], id, "tools/call", params)
			if _, err := inW.Write(buf); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()
	for range n {
		if _, err := mcpbench.ReadFrame(br, mcpbench.MaxFrame); err != nil {
			b.Fatal(err)
		}
		credits <- struct{}{}
	}
	if err := <-writeErr; err != nil {
		b.Fatal(err)
	}
}
