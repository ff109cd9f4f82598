// Command sdkclientbench drives a streamable HTTP MCP server with the
// official Go SDK's client: sessions clients at once, each making its
// share of calls one after another, at the protocol version asked for
// (2025-11-25: a session each; 2026-07-28: no session, the version in
// every request). It prints one JSON line: the server's CPU per call
// (read from /proc/PID) and calls per second over the measured calls.
// bench/nextgen.sh runs it in interleaved rounds.
//
//	sdkclientbench --url http://127.0.0.1:PORT/mcp --pid PID --version 2026-07-28
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/bench/mcpbench"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type result struct {
	Name          string  `json:"name"`
	Round         int     `json:"round"`
	Version       string  `json:"version"`
	Sessions      int     `json:"sessions"`
	Calls         int     `json:"calls"`
	CPUPerCallUs  float64 `json:"cpuPerCallUs"`
	CallsPerSec   float64 `json:"callsPerSec"`
	NegotiatedAll bool    `json:"negotiatedAll"` // every session speaks the version asked for
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sdkclientbench:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("url", "", "the server's MCP endpoint (required)")
	pid := flag.Int("pid", 0, "the server's process id, for its CPU (required)")
	name := flag.String("name", "", "label of the server")
	version := flag.String("version", "2026-07-28", "protocol version: 2025-11-25 or 2026-07-28")
	sessions := flag.Int("sessions", 16, "clients at once")
	calls := flag.Int("calls", 4000, "measured calls in all")
	warmup := flag.Int("warmup", 20, "calls per client before the measured ones")
	tool := flag.String("tool", "getOrderStatus", "tool to call")
	args := flag.String("args", `{"orderId":"A-1024"}`, "tool arguments, a JSON object")
	round := flag.Int("round", 0, "round number recorded in the result")
	reportFile := flag.String("report", "", "print the Markdown table of the results in this file (JSON lines) instead")
	flag.Parse()
	if *reportFile != "" {
		return report(*reportFile)
	}
	if *url == "" || *pid <= 0 {
		return errors.New("--url and --pid are required")
	}
	if *sessions < 1 || *sessions > 1024 || *calls < *sessions || *calls > 1_000_000 || *warmup < 0 || *warmup > 10_000 {
		return errors.New("--sessions 1..1024, --calls from --sessions to 1,000,000, --warmup 0..10,000")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		return fmt.Errorf("--args: %w", err)
	}
	// Each run is bounded: a server that stops answering ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * *sessions}, Timeout: time.Minute}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "sdkclientbench", Version: "1"}, nil)
	css := make([]*mcp.ClientSession, *sessions)
	defer func() {
		for _, cs := range css {
			if cs != nil {
				cs.Close()
			}
		}
	}()
	all := true
	for i := range css {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: *url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: *version})
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		css[i] = cs
		all = all && cs.InitializeResult().ProtocolVersion == *version
	}
	params := &mcp.CallToolParams{Name: *tool, Arguments: arguments}
	each := func(n int) error {
		var wg sync.WaitGroup
		errs := make([]error, len(css))
		for i, cs := range css {
			wg.Go(func() {
				k := n / len(css)
				if i < n%len(css) {
					k++
				}
				for range k {
					res, err := cs.CallTool(ctx, params)
					if err == nil && res.IsError {
						err = fmt.Errorf("%s answered an error", *tool)
					}
					if err != nil {
						errs[i] = err
						return
					}
				}
			})
		}
		wg.Wait()
		return errors.Join(errs...)
	}
	if err := each(*warmup * len(css)); err != nil {
		return err
	}
	cpu0, err := mcpbench.CPUOf(*pid)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := each(*calls); err != nil {
		return err
	}
	elapsed := time.Since(start)
	cpu1, err := mcpbench.CPUOf(*pid)
	if err != nil {
		return err
	}
	r := result{Name: *name, Round: *round, Version: *version, Sessions: *sessions, Calls: *calls,
		CPUPerCallUs:  float64((cpu1 - cpu0).Microseconds()) / float64(*calls),
		CallsPerSec:   float64(*calls) / elapsed.Seconds(),
		NegotiatedAll: all}
	return json.NewEncoder(os.Stdout).Encode(r)
}

// report prints the medians (min–max) of the results in file by server
// and version, and the ratio of agentapp's two versions' medians.
func report(file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	type key struct{ name, version string }
	cpu, rate := map[key][]float64{}, map[key][]float64{}
	var order []key
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if !r.NegotiatedAll {
			return fmt.Errorf("%s: %s did not speak %s", file, r.Name, r.Version)
		}
		k := key{r.Name, r.Version}
		if _, ok := cpu[k]; !ok {
			order = append(order, k)
		}
		cpu[k] = append(cpu[k], r.CPUPerCallUs)
		rate[k] = append(rate[k], r.CallsPerSec)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	med := func(v []float64) float64 {
		s := slices.Sorted(slices.Values(v))
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	slices.SortFunc(order, func(a, b key) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		return strings.Compare(b.version, a.version)
	})
	fmt.Println("| Server | Protocol | Server CPU per call, µs: median (min–max) | Calls/s: median (min–max) |")
	fmt.Println("|---|---|---|---|")
	for _, k := range order {
		fmt.Printf("| %s | %s | %.0f (%.0f–%.0f) | %.0f (%.0f–%.0f) |\n", k.name, k.version,
			med(cpu[k]), slices.Min(cpu[k]), slices.Max(cpu[k]), med(rate[k]), slices.Min(rate[k]), slices.Max(rate[k]))
	}
	next, old := cpu[key{"agentapp serve --http", "2026-07-28"}], cpu[key{"agentapp serve --http", "2025-11-25"}]
	if len(next) > 0 && len(old) > 0 {
		fmt.Printf("\n2026-07-28 against 2025-11-25 on agentapp, server CPU per call (medians): %.2f×, over %d rounds\n", med(next)/med(old), len(next))
	}
	return nil
}
