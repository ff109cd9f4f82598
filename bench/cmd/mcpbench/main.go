//go:build linux

// Command mcpbench measures stdio MCP servers; see package mcpbench.
//
//	mcpbench [--name N] --tool T [--args JSON] [--calls 2000] [--inflight 16] [--out FILE] -- COMMAND ARGS…
//	mcpbench connect [--n 5] [--rounds 5] [--out FILE] -- COMMAND ARGS…   ("{tmpdir}" in ARGS: a directory per server)
//	mcpbench bridge [--server NAME] --tool T [--args JSON] [--calls 2000] [--out FILE] -- COMMAND ARGS…
//	mcpbench spawn [--name N] --expect TEXT [--runs 20] [--out FILE] -- COMMAND ARGS…
//	mcpbench http --url URL --pid PID [--name N] [--sessions 16] [--calls 200] [--warmup 20] [--stateless] --tool T [--args JSON] [--out FILE]
//	mcpbench web --url BASE --pid PID --api chat|v1 [--name N] [--sessions 200] [--repeats 3] [--warmup 0] [--message M] [--expect TEXT] [--out FILE]
//	mcpbench freeport
//	mcpbench table FILE.jsonl
//	mcpbench report --results FILE.jsonl [--connect FILE.jsonl] [--clients FILE.jsonl] [--spawns FILE.jsonl]
//		[--ts FILE.jsonl] [--http FILE.jsonl] [--web FILE.jsonl]
//		[--gobench FILE.txt] [--notes FILE] [--append FILE]… [--command CMD]
//
// The first form prints one JSON object on stdout (and appends it to
// --out) and the Markdown table on stderr. Every server is started in a
// process group of its own, which is killed and reaped before mcpbench
// exits, also on error or SIGINT/SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/bench/mcpbench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		// Whatever is running, its servers go with us.
		mcpbench.KillAll()
	}()
	err := run(ctx, os.Args[1:])
	stop()
	mcpbench.KillAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "connect":
			return runConnect(ctx, args[1:])
		case "bridge":
			return runBridge(ctx, args[1:])
		case "spawn":
			return runSpawn(ctx, args[1:])
		case "table":
			return runTable(args[1:])
		case "http":
			return runHTTP(ctx, args[1:])
		case "web":
			return runWeb(ctx, args[1:])
		case "freeport":
			return runFreePort()
		case "report":
			return runReport(args[1:])
		}
	}
	return runServer(ctx, args)
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "mcpbench: "+format+"\n", args...) }

// splitCommand separates flags from the server command after "--".
func splitCommand(args []string) (flags, command []string, err error) {
	for i, a := range args {
		if a == "--" {
			if i+1 == len(args) {
				break
			}
			return args[:i], args[i+1:], nil
		}
	}
	return nil, nil, errors.New("give the server command after --, e.g. -- node server.js")
}

func runServer(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	var o mcpbench.Options
	var argsJSON, out string
	fs.StringVar(&o.Name, "name", "", "label of the server in the output (default: the command)")
	fs.StringVar(&o.Tool, "tool", "", "tool to call (required)")
	fs.StringVar(&argsJSON, "args", "{}", "tool arguments, a JSON object")
	fs.IntVar(&o.Calls, "calls", 2000, "sequential calls measured for latency and CPU")
	fs.IntVar(&o.Warmup, "warmup", 200, "calls before the measured ones")
	fs.IntVar(&o.Inflight, "inflight", 16, "requests in flight in the throughput phase")
	fs.IntVar(&o.TputCalls, "throughput-calls", 0, "calls in the throughput phase (default 2×calls)")
	fs.IntVar(&o.ColdRuns, "cold", 10, "spawns for the cold-start median")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	flags, cmd, err := splitCommand(args)
	if err != nil {
		return err
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if o.Tool == "" {
		return errors.New("--tool is required")
	}
	o.Args = json.RawMessage(argsJSON)
	o.Command = cmd
	o.Log = logf
	r, err := mcpbench.Run(ctx, o)
	if err != nil {
		return err
	}
	r.Round = *round
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	fmt.Fprint(os.Stderr, "\n"+mcpbench.Table([]*mcpbench.Result{r}))
	if out != "" {
		return appendLine(out, line)
	}
	return nil
}

func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func runConnect(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench connect", flag.ContinueOnError)
	var o mcpbench.ConnectOptions
	var out string
	fs.StringVar(&o.Name, "name", "", "label of the server")
	fs.IntVar(&o.N, "n", 5, "servers connected concurrently")
	fs.IntVar(&o.Rounds, "rounds", 5, "rounds (the figures are medians)")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	flags, cmd, err := splitCommand(args)
	if err != nil {
		return err
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	o.Command, o.Log = cmd, logf
	if o.Name == "" {
		o.Name = cmd[0]
	}
	r, err := mcpbench.MeasureConnect(ctx, o)
	if err != nil {
		return err
	}
	r.Round = *round
	return printResult(r, out)
}

// printResult prints v as one JSON line and appends it to out, if given.
func printResult(v any, out string) error {
	line, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	if out != "" {
		return appendLine(out, line)
	}
	return nil
}

func runBridge(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench bridge", flag.ContinueOnError)
	var o mcpbench.ClientOptions
	var argsJSON, out string
	fs.StringVar(&o.Server, "server", "", "label of the server (default: the command)")
	fs.StringVar(&o.Tool, "tool", "", "tool to call (required)")
	fs.StringVar(&argsJSON, "args", "{}", "tool arguments, a JSON object")
	fs.IntVar(&o.Calls, "calls", 2000, "sequential calls measured")
	fs.IntVar(&o.Warmup, "warmup", 200, "calls before the measured ones")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	flags, cmd, err := splitCommand(args)
	if err != nil {
		return err
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if o.Tool == "" {
		return errors.New("--tool is required")
	}
	if !json.Valid([]byte(argsJSON)) {
		return fmt.Errorf("--args is not valid JSON: %s", argsJSON)
	}
	o.Args, o.Command = json.RawMessage(argsJSON), cmd
	if o.Server == "" {
		o.Server = cmd[0]
	}
	r, err := mcpbench.MeasureBridge(ctx, o)
	if err != nil {
		return err
	}
	r.Round = *round
	return printResult(r, out)
}

func runHTTP(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench http", flag.ContinueOnError)
	var o mcpbench.HTTPOptions
	var argsJSON, out string
	fs.StringVar(&o.Name, "name", "", "label of the server (default: the URL)")
	fs.StringVar(&o.URL, "url", "", "the server's MCP endpoint, http://HOST:PORT/mcp (required)")
	fs.IntVar(&o.PID, "pid", 0, "the server's process id, for its CPU and memory (required)")
	fs.IntVar(&o.Sessions, "sessions", 16, "sessions at once, each making its calls one after another")
	fs.IntVar(&o.Calls, "calls", 200, "measured calls per session")
	fs.IntVar(&o.Warmup, "warmup", 20, "calls per session before the measured ones")
	fs.BoolVar(&o.Stateless, "stateless", false, "the server keeps no sessions (no memory per session)")
	fs.StringVar(&o.Tool, "tool", "", "tool to call (required)")
	fs.StringVar(&argsJSON, "args", "{}", "tool arguments, a JSON object")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.URL == "" || o.PID <= 0 || o.Tool == "" {
		return errors.New("--url, --pid and --tool are required")
	}
	if !json.Valid([]byte(argsJSON)) {
		return fmt.Errorf("--args is not valid JSON: %s", argsJSON)
	}
	o.Args, o.Log = json.RawMessage(argsJSON), logf
	if o.Name == "" {
		o.Name = o.URL
	}
	r, err := mcpbench.MeasureHTTP(ctx, o)
	if err != nil {
		return fmt.Errorf("%s, %d sessions: %w", o.Name, o.Sessions, err)
	}
	r.Round = *round
	return printResult(r, out)
}

func runWeb(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench web", flag.ContinueOnError)
	var o mcpbench.WebOptions
	var out string
	fs.StringVar(&o.Name, "name", "agentapp web", "label of the server")
	fs.StringVar(&o.BaseURL, "url", "", "the web server, http://HOST:PORT (required)")
	fs.IntVar(&o.PID, "pid", 0, "the server's process id, for its CPU and memory (required)")
	fs.StringVar(&o.API, "api", "chat", "chat (the chat API) or v1 (/v1/chat/completions, streaming)")
	fs.IntVar(&o.Sessions, "sessions", 200, "turns at once, each from its own session")
	fs.IntVar(&o.Repeats, "repeats", 3, "times the turns are run and timed")
	fs.IntVar(&o.Warmup, "warmup", 0, "times the turns are run first, untimed (the first run's first-event p99 is reported as cold_first_event_p99_ms)")
	fs.StringVar(&o.Message, "message", "订单 A-1024 到哪了？", "the user's message")
	fs.StringVar(&o.Expect, "expect", "已发货", "text every answer must contain")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.BaseURL == "" || o.PID <= 0 {
		return errors.New("--url and --pid are required")
	}
	o.Log = logf
	r, err := mcpbench.MeasureWeb(ctx, o)
	if err != nil {
		return fmt.Errorf("%s, %s, %d turns at once: %w", o.Name, o.API, o.Sessions, err)
	}
	r.Round = *round
	return printResult(r, out)
}

// runFreePort prints a TCP port on 127.0.0.1 that was free a moment ago,
// for compare.sh to start a server on.
func runFreePort() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Println(ln.Addr().(*net.TCPAddr).Port)
	return nil
}

func runSpawn(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcpbench spawn", flag.ContinueOnError)
	var o mcpbench.SpawnOptions
	var out string
	fs.StringVar(&o.Name, "name", "", "label of the command (default: the command)")
	fs.StringVar(&o.Expect, "expect", "", "text the output must contain (required)")
	fs.IntVar(&o.Runs, "runs", 20, "spawns; the figure is their median")
	fs.StringVar(&out, "out", "", "also append the JSON object to this file")
	round := fs.Int("round", 0, "round number recorded in the result")
	flags, cmd, err := splitCommand(args)
	if err != nil {
		return err
	}
	if err := fs.Parse(flags); err != nil {
		return err
	}
	if o.Expect == "" {
		return errors.New("--expect is required: a run counts only when its answer is right")
	}
	o.Command = cmd
	if o.Name == "" {
		o.Name = cmd[0]
	}
	r, err := mcpbench.MeasureSpawn(ctx, o)
	if err != nil {
		return err
	}
	r.Round = *round
	return printResult(r, out)
}

func runTable(args []string) error {
	if len(args) != 1 {
		return errors.New("usage: mcpbench table FILE.jsonl")
	}
	rs, err := mcpbench.ReadResults(args[0])
	if err != nil {
		return err
	}
	fmt.Print(mcpbench.Table(rs))
	return nil
}

// listFlag collects a repeated flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runReport(args []string) error {
	fs := flag.NewFlagSet("mcpbench report", flag.ContinueOnError)
	var in mcpbench.ReportInput
	var results, connect, clients, spawns, gobench, notes, tsFile, httpFile, webFile string
	var appendix listFlag
	fs.StringVar(&results, "results", "", "JSON lines from the server runs of every round")
	fs.StringVar(&in.Ours, "ours", "agentapp serve", "name of our server in --results")
	fs.StringVar(&in.Ref, "ref", "server-everything (TS)", "name of the reference server in --results")
	fs.StringVar(&connect, "connect", "", "JSON lines from mcpbench connect, one per round")
	fs.StringVar(&clients, "clients", "", "JSON lines from mcpbench bridge and bench/tsclient.mjs")
	fs.StringVar(&spawns, "spawns", "", "JSON lines from mcpbench spawn, one per round")
	fs.StringVar(&tsFile, "ts", "", "JSON lines from bench/tsclient.mjs's row set (the same client on both servers)")
	fs.StringVar(&httpFile, "http", "", "JSON lines from mcpbench http")
	fs.StringVar(&webFile, "web", "", "JSON lines from mcpbench web")
	fs.StringVar(&gobench, "gobench", "", "output of go test -bench")
	fs.StringVar(&notes, "notes", "", "Markdown pasted as the analysis section")
	fs.Var(&appendix, "append", "Markdown file pasted verbatim at the end (repeatable)")
	fs.StringVar(&in.Command, "command", "bash bench/compare.sh", "the command that reproduces the run")
	fs.StringVar(&in.ScriptLoad, "load", "", "load average and other notes about the machine during the run")
	fs.StringVar(&in.Versions, "versions", "", "tool versions, one per line")
	fs.StringVar(&in.Elapsed, "elapsed", "", "how long the whole script took")
	date := fs.String("date", "", "when the run happened (RFC 3339; default now)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if *date != "" {
		if in.Now, err = time.Parse(time.RFC3339, *date); err != nil {
			return fmt.Errorf("--date: %w", err)
		}
	}
	if in.Results, err = mcpbench.ReadResults(results); err != nil {
		return err
	}
	var have []string
	for _, r := range in.Results {
		have = append(have, r.Name)
	}
	if !slices.Contains(have, in.Ours) || !slices.Contains(have, in.Ref) {
		return fmt.Errorf("%s: want results named %q (--ours) and %q (--ref), have %q", results, in.Ours, in.Ref, have)
	}
	if connect != "" {
		if in.Connect, err = mcpbench.ReadJSONLines[mcpbench.ConnectResult](connect); err != nil {
			return err
		}
	}
	if clients != "" {
		if in.Clients, err = mcpbench.ReadJSONLines[mcpbench.ClientResult](clients); err != nil {
			return err
		}
	}
	if spawns != "" {
		if in.Spawns, err = mcpbench.ReadJSONLines[mcpbench.SpawnResult](spawns); err != nil {
			return err
		}
	}
	if tsFile != "" {
		if in.TS, err = mcpbench.ReadJSONLines[mcpbench.ClientResult](tsFile); err != nil {
			return err
		}
	}
	if httpFile != "" {
		if in.HTTP, err = mcpbench.ReadJSONLines[mcpbench.HTTPResult](httpFile); err != nil {
			return err
		}
	}
	if webFile != "" {
		if in.Web, err = mcpbench.ReadJSONLines[mcpbench.WebResult](webFile); err != nil {
			return err
		}
	}
	if gobench != "" {
		b, err := os.ReadFile(gobench)
		if err != nil {
			return err
		}
		in.GoBench = mcpbench.ParseGoBench(string(b))
	}
	read := func(path string) (string, error) {
		b, err := os.ReadFile(path)
		return string(b), err
	}
	if notes != "" {
		if in.Notes, err = read(notes); err != nil {
			return err
		}
	}
	for _, a := range appendix {
		text, err := read(a)
		if err != nil {
			return err
		}
		in.Appendix = append(in.Appendix, text)
	}
	in.Machine = mcpbench.DescribeMachine()
	fmt.Print(mcpbench.Report(in))
	return nil
}
