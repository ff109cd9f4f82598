//go:build linux

package mcpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// Options say what to measure.
type Options struct {
	Name      string          // label in the output
	Command   []string        // the server command and its arguments
	Env       []string        // nil: the harness's environment
	Tool      string          // the tool to call
	Args      json.RawMessage // its arguments, a JSON object
	Calls     int             // sequential calls for latency and CPU (default 2000)
	Warmup    int             // calls before them, not measured (default 200)
	Inflight  int             // requests in flight for throughput (default 16)
	TputCalls int             // calls in the throughput phase (default 2×Calls)
	ColdRuns  int             // spawns for cold start (default 10)
	Timeout   time.Duration   // bound on any one wait (default 30 s)
	ExitWait  time.Duration   // how long to wait for exit after stdin EOF (default 5 s)
	Log       func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.Calls <= 0 {
		o.Calls = 2000
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	} else if o.Warmup == 0 {
		o.Warmup = 200
	}
	if o.Inflight <= 0 {
		o.Inflight = 16
	}
	if o.TputCalls <= 0 {
		o.TputCalls = 2 * o.Calls
	}
	if o.ColdRuns <= 0 {
		o.ColdRuns = 10
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.ExitWait <= 0 {
		o.ExitWait = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = func(string, ...any) {}
	}
	if o.Name == "" && len(o.Command) > 0 {
		o.Name = o.Command[0]
	}
}

// LoadAvg returns the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Run measures one server. Every process it starts is killed and reaped
// before it returns, on success and on error alike.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	params, err := ToolsCallParams(o.Tool, o.Args)
	if err != nil {
		return nil, err
	}
	r := &Result{Name: o.Name, Command: o.Command, Tool: o.Tool, Args: o.Args, Calls: o.Calls,
		Warmup: o.Warmup, Inflight: o.Inflight, TputCalls: o.TputCalls,
		LoadBefore: LoadAvg(), Started: time.Now().UTC().Truncate(time.Second)}

	// Cold start: spawn → initialize answered, then stdin EOF → exit.
	var colds, idleExits []time.Duration
	for i := range o.ColdRuns {
		d, exit, err := coldStart(ctx, o)
		if err != nil {
			return nil, fmt.Errorf("%s: cold start %d: %w", o.Name, i+1, err)
		}
		colds = append(colds, d)
		idleExits = append(idleExits, exit)
		r.ColdStartAllMS = append(r.ColdStartAllMS, ms(d))
	}
	r.ColdStartMS = ms(Median(colds))
	r.EOFExitIdleMS = ms(Median(idleExits))
	for _, d := range idleExits {
		if d < 0 { // one spawn did not exit within ExitWait
			r.EOFExitIdleMS = -1
		}
	}
	o.Log("%s: cold start median %.1f ms", o.Name, r.ColdStartMS)

	if err := mainRun(ctx, o, params, r); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	r.LoadAfter = LoadAvg()
	r.DurationS = round3(time.Since(r.Started).Seconds())
	return r, nil
}

// coldStart spawns the server once and times the handshake, then the exit
// after stdin EOF (-1 ns if it did not exit within ExitWait).
func coldStart(ctx context.Context, o Options) (time.Duration, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	start := time.Now()
	s, err := Start(o.Command, o.Env)
	if err != nil {
		return 0, 0, err
	}
	defer s.Kill()
	m, err := s.Call(ctx, "initialize", InitializeParams)
	d := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	if m.Error != nil {
		return 0, 0, s.describe(fmt.Errorf("initialize: %w", m.Error))
	}
	if err := s.Notify("notifications/initialized", nil); err != nil {
		return 0, 0, err
	}
	exit, ok := s.CloseStdin(o.ExitWait)
	if !ok {
		exit = -1
	}
	return d, exit, nil
}

func mainRun(ctx context.Context, o Options, params json.RawMessage, r *Result) error {
	s, err := Start(o.Command, o.Env)
	if err != nil {
		return err
	}
	defer s.Kill()
	ictx, cancel := context.WithTimeout(ctx, o.Timeout)
	err = s.Initialize(ictx)
	cancel()
	if err != nil {
		return err
	}
	if g, err := SampleGroup(s.PGID()); err == nil {
		r.IdleCPUMS = ms(g.CPU)
	}

	// The first call on its own, for a sample of the result.
	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	first, err := s.Call(cctx, "tools/call", params)
	cancel()
	if err != nil {
		return err
	}
	if _, err := CheckToolResult(first); err != nil {
		return s.describe(fmt.Errorf("tools/call %s: %w", o.Tool, err))
	}
	r.SampleResult = string(first.Result)
	if len(r.SampleResult) > 300 {
		r.SampleResult = r.SampleResult[:300] + "…"
	}
	// The warm-up and the measured calls are written and checked by the
	// reader goroutine (Server.runBatch), one at a time.
	if _, err := s.runBatch(ctx, "warm-up", o.Tool, params, o.Warmup, 1, false, o.Timeout); err != nil {
		return err
	}

	// Sequential calls: latency and CPU per call.
	before, err := SampleGroup(s.PGID())
	if err != nil {
		return err
	}
	lat, err := s.runBatch(ctx, "sequential calls", o.Tool, params, o.Calls, 1, true, o.Timeout)
	if err != nil {
		return err
	}
	after, err := SampleGroup(s.PGID())
	if err != nil {
		return err
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	r.LatencyP50US = us(Percentile(lat, 50))
	r.LatencyP90US = us(Percentile(lat, 90))
	r.LatencyP99US = us(Percentile(lat, 99))
	r.LatencyMaxUS = us(Percentile(lat, 100))
	r.LatencyMeanUS = us(sum / time.Duration(len(lat)))
	r.CPUPerCallUS = us((after.CPU - before.CPU) / time.Duration(o.Calls))
	o.Log("%s: p50 %.0f µs, p99 %.0f µs, CPU %.0f µs/call", o.Name, r.LatencyP50US, r.LatencyP99US, r.CPUPerCallUS)

	// Throughput: Inflight requests outstanding on the one connection.
	tps, cpu, err := throughput(ctx, s, o, params)
	if err != nil {
		return err
	}
	r.ThroughputCPS = round3(tps)
	r.CPUPerCallTputUS = us(cpu / time.Duration(o.TputCalls))
	o.Log("%s: %.0f calls/s at %d in flight", o.Name, tps, o.Inflight)

	mem, err := SampleGroup(s.PGID())
	if err != nil {
		return err
	}
	r.RSSMiB = round3(float64(mem.RSS) / (1 << 20))
	r.PeakRSSMiB = round3(float64(mem.HWM) / (1 << 20))
	r.RSSAnonMiB = round3(float64(mem.RSSAnon) / (1 << 20))
	r.RSSFileMiB = round3(float64(mem.RSSFile) / (1 << 20))
	r.Processes = mem.Names
	r.Notifications = s.notifications.Load()
	r.ServerRequests = s.serverReqs.Load()

	exit, ok := s.CloseStdin(o.ExitWait)
	r.EOFExitMS = ms(exit)
	if !ok {
		r.EOFExitMS = -1
	}
	return nil
}

// throughput keeps o.Inflight requests outstanding until o.TputCalls were
// answered, and returns calls per second and the group's CPU time spent.
// The reader goroutine writes the next request as it reads each response
// (Server.runBatch), so the harness's own CPU per call stays small.
func throughput(ctx context.Context, s *Server, o Options, params json.RawMessage) (float64, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout+time.Duration(o.TputCalls)*10*time.Millisecond)
	defer cancel()
	before, err := SampleGroup(s.PGID())
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	if _, err := s.runBatch(ctx, "throughput", o.Tool, params, o.TputCalls, o.Inflight, false, o.Timeout); err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	after, err := SampleGroup(s.PGID())
	if err != nil {
		return 0, 0, err
	}
	return float64(o.TputCalls) / elapsed.Seconds(), after.CPU - before.CPU, nil
}
