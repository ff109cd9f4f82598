//go:build linux

// Command mcpbench measures stdio MCP servers; see package mcpbench.
//
//	mcpbench [--name N] --tool T [--args JSON] [--calls 2000] [--inflight 16] [--out FILE] -- COMMAND ARGS…
//	mcpbench connect [--n 5] [--rounds 5] [--out FILE] -- COMMAND ARGS…   ("{tmpdir}" in ARGS: a directory per server)
//	mcpbench table FILE.jsonl
//	mcpbench report --results FILE.jsonl --connect FILE.json --gobench FILE.txt [--notes FILE] [--command CMD]
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
	"os"
	"os/signal"
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
		case "table":
			return runTable(args[1:])
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
	fs.StringVar(&out, "out", "", "also write the JSON object to this file")
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
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	fmt.Println(string(line))
	if out != "" {
		return os.WriteFile(out, append(line, '\n'), 0o644)
	}
	return nil
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

func runReport(args []string) error {
	fs := flag.NewFlagSet("mcpbench report", flag.ContinueOnError)
	var in mcpbench.ReportInput
	var results, connect, gobench, notes string
	fs.StringVar(&results, "results", "", "JSON lines from the server runs: ours first, the reference second")
	fs.StringVar(&connect, "connect", "", "JSON from mcpbench connect")
	fs.StringVar(&gobench, "gobench", "", "output of go test -bench")
	fs.StringVar(&notes, "notes", "", "Markdown appended as the analysis section")
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
	if len(in.Results) != 2 {
		return fmt.Errorf("%s: want 2 results (ours, then the reference), have %d", results, len(in.Results))
	}
	if connect != "" {
		b, err := os.ReadFile(connect)
		if err != nil {
			return err
		}
		in.Connect = new(mcpbench.ConnectResult)
		if err := json.Unmarshal(b, in.Connect); err != nil {
			return fmt.Errorf("%s: %w", connect, err)
		}
	}
	if gobench != "" {
		b, err := os.ReadFile(gobench)
		if err != nil {
			return err
		}
		in.GoBench = mcpbench.ParseGoBench(string(b))
	}
	if notes != "" {
		b, err := os.ReadFile(notes)
		if err != nil {
			return err
		}
		in.Notes = string(b)
	}
	in.Machine = mcpbench.DescribeMachine()
	fmt.Print(mcpbench.Report(in))
	return nil
}
