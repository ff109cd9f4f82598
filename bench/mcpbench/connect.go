//go:build linux

package mcpbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/mcpclient"
)

// ConnectOptions say how to measure connecting several stdio servers with
// the bridge (mcpclient.Connect: spawn, initialize, tools/list, adapt).
type ConnectOptions struct {
	Name    string
	Command []string // "{tmpdir}" in an argument becomes a per-server temporary directory
	N       int      // servers (default 5)
	Rounds  int      // repetitions, the figures are medians (default 5)
	Log     func(format string, args ...any)
}

// MeasureConnect connects the server command N times one after the other,
// then N times concurrently, for each round. Every server gets its own
// temporary directory (removed at the end), used once unmeasured first so
// that the measured connects find initialised data as a user's would.
func MeasureConnect(ctx context.Context, o ConnectOptions) (*ConnectResult, error) {
	if o.N <= 0 {
		o.N = 5
	}
	if o.Rounds <= 0 {
		o.Rounds = 5
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if len(o.Command) == 0 {
		return nil, fmt.Errorf("no server command")
	}
	res := &ConnectResult{Name: o.Name, Command: o.Command, N: o.N, Rounds: o.Rounds, LoadBefore: LoadAvg()}
	cfgs := make([]mcpconfig.Server, o.N)
	for i := range cfgs {
		dir, err := os.MkdirTemp("", "mcpbench-connect-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		args := make([]string, len(o.Command)-1)
		for j, a := range o.Command[1:] {
			args[j] = strings.ReplaceAll(a, "{tmpdir}", dir)
		}
		cfgs[i] = mcpconfig.Server{Name: fmt.Sprintf("s%d", i+1), Command: o.Command[0], Args: args,
			ConnectTimeout: 60 * time.Second}
	}
	// Quiet: the bridge logs skipped lines and escalations at warn level.
	opts := []mcpclient.ConnectOption{mcpclient.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	connect := func(cfg mcpconfig.Server) (time.Duration, *mcpclient.Bridge, error) {
		start := time.Now()
		b, err := mcpclient.Connect(ctx, cfg, opts...)
		return time.Since(start), b, err
	}
	closeAll := func(bs []*mcpclient.Bridge) {
		var wg sync.WaitGroup
		for _, b := range bs {
			if b != nil {
				wg.Go(func() { _ = b.Close() })
			}
		}
		wg.Wait()
	}
	// Warm-up: first use of each data directory.
	for _, cfg := range cfgs {
		_, b, err := connect(cfg)
		if err != nil {
			return nil, err
		}
		closeAll([]*mcpclient.Bridge{b})
	}
	var slowest, conc, cpu []time.Duration
	for r := range o.Rounds {
		singles := make([]float64, o.N)
		var worst time.Duration
		for i, cfg := range cfgs {
			d, b, err := connect(cfg)
			closeAll([]*mcpclient.Bridge{b})
			if err != nil {
				return nil, err
			}
			singles[i] = ms(d)
			worst = max(worst, d)
		}
		res.SingleMS = append(res.SingleMS, singles)
		slowest = append(slowest, worst)

		bridges := make([]*mcpclient.Bridge, o.N)
		errs := make([]error, o.N)
		var wg sync.WaitGroup
		cpu0 := processCPU()
		start := time.Now()
		for i, cfg := range cfgs {
			wg.Go(func() { _, bridges[i], errs[i] = connect(cfg) })
		}
		wg.Wait()
		d := time.Since(start)
		closeAll(bridges)
		// The servers' CPU is counted once they are reaped, by Close; the
		// close sequence adds a little to it.
		cpu = append(cpu, processCPU()-cpu0)
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		res.ConcurrentMS = append(res.ConcurrentMS, ms(d))
		conc = append(conc, d)
		o.Log("connect round %d: slowest single %.1f ms, %d concurrent %.1f ms", r+1, ms(worst), o.N, ms(d))
	}
	res.SlowestSingleMS = ms(Median(slowest))
	res.ConcurrentMedianMS = ms(Median(conc))
	res.Ratio = round3(res.ConcurrentMedianMS / res.SlowestSingleMS)
	// What the cores allow: N connects cannot finish before their CPU time
	// spread over every core, however well they overlap.
	res.CPUs = runtime.NumCPU()
	res.ConcurrentCPUMS = ms(Median(cpu))
	res.FloorMS = round3(max(res.SlowestSingleMS, res.ConcurrentCPUMS/float64(res.CPUs)))
	res.FloorRatio = round3(res.ConcurrentMedianMS / res.FloorMS)
	res.LoadAfter = LoadAvg()
	return res, nil
}

// processCPU is the CPU time of this process and of its reaped children.
func processCPU() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}
