// Command testserver is a deliberately well- or ill-behaved MCP stdio server
// for the bridge's tests. The mode flag picks the behaviour:
//
//	normal       a go-sdk server with the tools echo, sleep, noise, big, env
//	             and fail, and the resource test://hello; with -live also
//	             addtool (adds a tool, so the server sends
//	             notifications/tools/list_changed), lookup (read-only),
//	             listcount (how many tools/list requests it received) and
//	             meta (the _meta of its call, as the server decoded it);
//	             with -ext-tasks it declares the tasks extension;
//	             with -crash-every N the process exits with status 7 on
//	             every Nth tools/call, before answering it
//	ignore-term  like normal, but ignores SIGTERM and keeps running after stdin EOF
//	no-init      reads stdin and never answers anything
//	garbage      like normal, but prints non-JSON lines on stdout first
//	exit-start   writes an error on stderr and exits with status 3
//	raw          a hand-written JSON-RPC responder: tools/list in two pages
//	             with schemas whose bytes (spacing, key order) must survive,
//	             and a tool answering with a legacy toolResult
//	silent       like raw, but a request of a method it does not know
//	             (server/discover) gets no answer at all
//	setsid       like normal, but first starts a copy of itself in sleeper
//	             mode in a session of its own (setsid), out of the process
//	             group, and writes its pid to -grandchild-pidfile
//	daemon       like normal, but first starts a sleeper as a daemon does:
//	             through a child that exits at once (double fork), in a
//	             session of its own, with an empty environment; its pid goes
//	             to -grandchild-pidfile
//	sleeper      sleeps until killed (the setsid grandchild)
//
// The hostile modes (hostile.go) attack the client: hang-tools,
// hang-resources, endless-pages, repeat-cursor, huge-pages (-page-bytes;
// the paging modes in every list method, or in -only's), bad-names,
// stdout-flood and stderr-flood (-flood lines before serving).
//
// It writes its pid and process group id to the file named by -pidfile, so tests can check the
// process table for it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	mode := flag.String("mode", "normal", "behaviour (see package doc)")
	pidfile := flag.String("pidfile", "", "write our pid to this file")
	flag.IntVar(&crashEvery, "crash-every", 0, "exit with status 7 on every Nth tools/call (0: never)")
	flag.BoolVar(&live, "live", false, "also offer addtool, lookup, listcount and meta")
	flag.BoolVar(&extTasks, "ext-tasks", false, "declare the tasks extension (io.modelcontextprotocol/tasks)")
	grandchild := flag.String("grandchild-pidfile", "", "setsid mode: write the grandchild's pid to this file")
	flood := flag.Int("flood", 200000, "stdout-flood and stderr-flood modes: how many lines to write")
	flag.IntVar(&pageBytes, "page-bytes", 10<<20, "huge-pages mode: the size of a page")
	flag.StringVar(&onlyList, "only", "", "paging modes: be hostile in this list method only (e.g. resources/list)")
	flag.Parse()
	if *pidfile != "" {
		if err := os.WriteFile(*pidfile, fmt.Appendf(nil, "%d %d", os.Getpid(), processGroup()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "testserver starting in mode %s\n", *mode)
	switch *mode {
	case "normal":
		serve()
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		serve()
		fmt.Fprintln(os.Stderr, "testserver: stdin closed, staying alive anyway")
		select {}
	case "no-init":
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
		}
		select {}
	case "garbage":
		// Deliberately breaks the rule that stdout belongs to the protocol:
		// this mode plays a badly written server whose banner and debris
		// the bridge must skip.
		fmt.Println("Server banner: welcome!")
		fmt.Println("{not json")
		fmt.Println("[1, 2")
		fmt.Println()
		// JSON, but not JSON-RPC: a record of a logger writing JSON to
		// stdout.
		fmt.Println(`{"level":30,"msg":"listening on stdio"}`)
		serve()
	case "exit-start":
		fmt.Fprintln(os.Stderr, "fatal: no API key configured")
		os.Exit(3)
	case "raw":
		raw(false)
	case "silent":
		raw(true)
	case "daemon":
		if err := startDaemon(*grandchild); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		serve()
	case "daemon-fork":
		if err := daemonFork(*grandchild); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
	case "setsid":
		if err := startSetsidSleeper(*grandchild); err != nil {
			fmt.Fprintln(os.Stderr, "testserver:", err)
			os.Exit(1)
		}
		serve()
	case "sleeper":
		select {}
	case "stdout-flood":
		hostile(func(m string, p rawParams) (string, bool) { return plainAnswer(m, p) }, *flood, 0)
	case "stderr-flood":
		hostile(func(m string, p rawParams) (string, bool) { return plainAnswer(m, p) }, 0, *flood)
	default:
		if answer, ok := hostileModes[*mode]; ok {
			hostile(answer, 0, 0)
			return
		}
		fmt.Fprintf(os.Stderr, "testserver: unknown mode %q\n", *mode)
		os.Exit(2)
	}
}

// crashEvery makes the server exit on every Nth tools/call; live adds the
// tools of the resilience tests.
var (
	crashEvery int
	live       bool
	toolLists  atomic.Int64
	extTasks   bool
)

func serve() {
	var opts *mcp.ServerOptions
	if extTasks {
		caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
		caps.AddExtension("io.modelcontextprotocol/tasks", map[string]any{})
		opts = &mcp.ServerOptions{Capabilities: caps}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, opts)
	var calls atomic.Int64
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/list" {
				toolLists.Add(1)
			}
			if method == "tools/call" && crashEvery > 0 {
				if n := calls.Add(1); n%int64(crashEvery) == 0 {
					fmt.Fprintf(os.Stderr, "testserver: crashing on call %d\n", n)
					os.Exit(7)
				}
			}
			return next(ctx, method, req)
		}
	})
	if live {
		addLiveTools(srv)
	}
	srv.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Echoes its text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(map[string]string{"echo": in.Text})
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: map[string]any{"echo": in.Text},
		}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "sleep",
		Description: "Blocks until cancelled.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "testserver: sleep started")
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "testserver: sleep cancelled")
		return nil, ctx.Err()
	})
	srv.AddTool(&mcp.Tool{
		Name:        "noise",
		Description: "Prints a non-JSON line on stdout, then answers.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Println("debug: noise tool called")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "still alive"}}}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "big",
		Description: "Answers with n bytes of text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ N int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.N)}}}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "env",
		Description: "Reports an environment variable and the working directory.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		wd, _ := os.Getwd()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: os.Getenv(in.Name) + "|" + wd}}}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "fail",
		Description: "Always reports a tool error.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "boom: bad input"}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://hello", Name: "hello", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello resource"}}}, nil
		})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
	}
}

// addLiveTools adds addtool, lookup and listcount.
func addLiveTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{Name: "listcount", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(toolLists.Load())}}}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "meta", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(req.Params.Meta)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	srv.AddTool(&mcp.Tool{
		Name:        "addtool",
		Description: "Adds a tool with the given name (it echoes like echo).",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		srv.AddTool(&mcp.Tool{Name: in.Name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Name + " works"}}}, nil
			})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + in.Name}}}, nil
	})
	srv.AddTool(&mcp.Tool{
		Name:        "lookup",
		Description: "A read-only tool.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "looked up"}}}, nil
	})
}

// RawSchemaA and RawSchemaB are what raw mode sends as input schemas, byte
// for byte (tests compare against them).
const (
	RawSchemaA = `{ "type": "object",  "properties": { "zeta": {"type":"number", "minimum": 1.50}, "alpha": {"type":"string"} }, "required": ["zeta"] }`
	RawSchemaB = `{"properties":{},"type":"object","additionalProperties":false}`
)

// raw answers JSON-RPC by hand, so the bytes on the wire are exactly ours.
func raw(silent bool) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	reply := func(id json.RawMessage, result string) {
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", id, result)
		out.Flush()
	}
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
				Name   string `json:"name"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil || msg.ID == nil {
			continue // notifications
		}
		switch msg.Method {
		case "initialize":
			reply(msg.ID, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
		case "tools/list":
			if msg.Params.Cursor == "" {
				reply(msg.ID, `{"tools":[{"name":"a","description":"first page","inputSchema":`+RawSchemaA+`}],"nextCursor":"page2"}`)
			} else {
				reply(msg.ID, `{"tools":[{"name":"legacy","inputSchema":`+RawSchemaB+`}]}`)
			}
		case "tools/call":
			switch msg.Params.Name {
			case "legacy":
				reply(msg.ID, `{"toolResult":{"z":1,"a":[true,null]}}`)
			case "input":
				// Not listed: a multi-round-trip answer with no input
				// requests, which the SDK's client takes for load shedding.
				reply(msg.ID, `{"inputRequests":{},"content":[]}`)
			default:
				reply(msg.ID, `{"content":[{"type":"text","text":"a called"}]}`)
			}
		default:
			if silent {
				continue
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", msg.ID)
			out.Flush()
		}
	}
}
