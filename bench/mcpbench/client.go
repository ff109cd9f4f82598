//go:build linux

package mcpbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
)

// ClientOptions say how to measure the chat's bridge against a server.
type ClientOptions struct {
	Server  string // label of the server
	Command []string
	Env     map[string]string // merged over the environment
	Tool    string
	Args    json.RawMessage
	Calls   int // default 2000
	Warmup  int // default 200
}

// MeasureBridge connects the server with mcpclient.Connect, as the chat
// does, and times Calls sequential calls of the adapted tool's Execute
// (the call and the mapping of its result for the model) after Warmup
// unmeasured ones. The bridge's Close ends the server.
func MeasureBridge(ctx context.Context, o ClientOptions) (*ClientResult, error) {
	if o.Calls <= 0 {
		o.Calls = 2000
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 200
	}
	if len(o.Command) == 0 {
		return nil, errors.New("no server command")
	}
	if o.Tool == "" {
		return nil, errors.New("no tool to call")
	}
	if len(o.Args) == 0 {
		o.Args = json.RawMessage(`{}`)
	}
	cfg := mcpconfig.Server{Name: "bench", Command: o.Command[0], Args: o.Command[1:], Env: o.Env, ConnectTimeout: 60 * time.Second}
	start := time.Now()
	br, err := mcpclient.Connect(ctx, cfg, mcpclient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		return nil, err
	}
	connect := time.Since(start)
	defer br.Close()
	var tool *agent.Tool
	var names []string
	for _, t := range br.Tools() {
		names = append(names, t.Name)
		if t.Name == o.Tool {
			tool = t
		}
	}
	if tool == nil {
		return nil, fmt.Errorf("the server has no tool %q (it has %s)", o.Tool, strings.Join(names, ", "))
	}
	call := func() (time.Duration, error) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		t0 := time.Now()
		_, err := tool.Execute(cctx, o.Args)
		return time.Since(t0), err
	}
	for i := range o.Warmup {
		if _, err := call(); err != nil {
			return nil, fmt.Errorf("warm-up call %d: %w", i+1, err)
		}
	}
	ds := make([]time.Duration, o.Calls)
	var sum time.Duration
	for i := range ds {
		d, err := call()
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", i+1, err)
		}
		ds[i] = d
		sum += d
	}
	return &ClientResult{Client: "agentapp mcpclient", Server: o.Server, Command: o.Command, Tool: o.Tool,
		Args: o.Args, Calls: o.Calls, Warmup: o.Warmup, ConnectMS: ms(connect),
		P50US: us(Percentile(ds, 50)), P99US: us(Percentile(ds, 99)), MeanUS: us(sum / time.Duration(len(ds)))}, nil
}

// SpawnOptions say how to time a command from spawn to its answer.
type SpawnOptions struct {
	Name    string
	Command []string
	Env     []string // nil: the harness's environment
	Expect  string   // the output must contain this
	Runs    int      // default 20
	Timeout time.Duration
}

// MeasureSpawn runs the command Runs times one after the other, each in a
// process group of its own that is killed once the command has exited (so
// nothing it started outlives it), and takes the median wall time from
// just before the spawn to the exit. A run that fails, times out or does
// not print Expect is an error: a fast wrong answer is not a figure.
func MeasureSpawn(ctx context.Context, o SpawnOptions) (*SpawnResult, error) {
	if o.Runs <= 0 {
		o.Runs = 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if len(o.Command) == 0 {
		return nil, errors.New("no command")
	}
	res := &SpawnResult{Name: o.Name, Command: o.Command, Expect: o.Expect, Runs: o.Runs}
	var ds []time.Duration
	for i := range o.Runs {
		d, err := spawnOnce(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", i+1, err)
		}
		ds = append(ds, d)
		res.AllMS = append(res.AllMS, ms(d))
	}
	res.MedianMS = ms(Median(ds))
	return res, nil
}

func spawnOnce(ctx context.Context, o SpawnOptions) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, o.Command[0], o.Command[1:]...)
	cmd.Stdout, cmd.Stderr, cmd.Env = &stdout, &stderr, o.Env
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything left in its group
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("no answer within %v", o.Timeout)
	}
	if err != nil {
		return 0, fmt.Errorf("%w; stderr: %s", err, tail(stderr.String(), 400))
	}
	if !strings.Contains(stdout.String(), o.Expect) {
		return 0, fmt.Errorf("the output does not contain %q: %s", o.Expect, tail(stdout.String(), 400))
	}
	return d, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
