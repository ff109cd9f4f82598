package mcpbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ReadResults reads the JSON lines the server runs appended to path.
func ReadResults(path string) ([]*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rs []*Result
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		r := new(Result)
		if err := json.Unmarshal(line, r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// Machine describes where the figures come from.
type Machine struct {
	CPUs     int
	CPUModel string
	MemTotal string
	Kernel   string
	GoArch   string
}

// DescribeMachine reads /proc for the CPU model, memory and kernel.
func DescribeMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), CPUModel: "?", MemTotal: "?", Kernel: "?", GoArch: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				f := strings.Fields(v)
				if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
					m.MemTotal = fmt.Sprintf("%.1f GiB", kb/(1<<20))
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return m
}

func cpuModel(cpuinfo []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// ReportInput is everything BENCHMARKS.md is written from: the figures
// of every interleaved round of one compare.sh run.
type ReportInput struct {
	Ours, Ref  string    // names of the two servers in Results
	Results    []*Result // every server run of every round
	Connect    []*ConnectResult
	Clients    []*ClientResult
	Spawns     []*SpawnResult
	TS         []*ClientResult // bench/tsclient.mjs's row set: the same client on both servers, stdio and HTTP
	HTTP       []*HTTPResult
	Web        []*WebResult
	GoBench    []GoBench
	Notes      string   // hand-written analysis, pasted before "Reproduce"
	Appendix   []string // hand-written sections, pasted verbatim at the end
	Command    string
	ScriptLoad string
	Versions   string
	Elapsed    string
	Machine    Machine
	Now        time.Time // zero: time.Now()
}

// rounds lists the round numbers of the server runs in order.
func (in ReportInput) rounds() []int {
	var rs []int
	for _, r := range in.Results {
		if !slices.Contains(rs, r.Round) {
			rs = append(rs, r.Round)
		}
	}
	slices.Sort(rs)
	return rs
}

// series is f of the named server's result in each round (NaN where a
// round has none).
func (in ReportInput) series(name string, f func(*Result) float64) Series {
	rounds := in.rounds()
	s := make(Series, len(rounds))
	for i, round := range rounds {
		s[i] = math.NaN()
		for _, r := range in.Results {
			if r.Round == round && r.Name == name {
				s[i] = f(r)
			}
		}
	}
	return s
}

// clientSeries is the p50 (or another figure) of one client against one
// server, round by round.
func (in ReportInput) clientSeries(client, server string, f func(*ClientResult) float64) Series {
	rounds := in.rounds()
	s := make(Series, len(rounds))
	for i, round := range rounds {
		s[i] = math.NaN()
		for _, c := range in.Clients {
			if c.Round == round && c.Client == client && c.Server == server {
				s[i] = f(c)
			}
		}
	}
	return s
}

func (in ReportInput) clientPairs() (clients, servers []string) {
	for _, c := range in.Clients {
		if !slices.Contains(clients, c.Client) {
			clients = append(clients, c.Client)
		}
		if !slices.Contains(servers, c.Server) {
			servers = append(servers, c.Server)
		}
	}
	return clients, servers
}

// goSeries is one metric of a Go benchmark over its -count repetitions.
func (in ReportInput) goSeries(name, metric string) Series {
	var s Series
	for _, g := range in.GoBench {
		if g.Name == name {
			if v, ok := g.Metrics[metric]; ok {
				s = append(s, v)
			}
		}
	}
	return s
}

// roundSeries is f of the one item in each round that match picks (NaN
// where a round has none).
func roundSeries[T any](in ReportInput, items []*T, round func(*T) int, match func(*T) bool, f func(*T) float64) Series {
	rounds := in.rounds()
	s := make(Series, len(rounds))
	for i, r := range rounds {
		s[i] = math.NaN()
		for _, it := range items {
			if round(it) == r && match(it) {
				s[i] = f(it)
			}
		}
	}
	return s
}

// tsSeries is a figure of the TypeScript SDK client's row set on one
// server, over transport ("stdio" or "http").
func (in ReportInput) tsSeries(server, transport string, f func(*ClientResult) float64) Series {
	return roundSeries(in, in.TS, func(c *ClientResult) int { return c.Round },
		func(c *ClientResult) bool { return c.Server == server && c.Transport == transport }, f)
}

// httpSeries is a figure of one HTTP server's load at n sessions.
func (in ReportInput) httpSeries(server string, n int, f func(*HTTPResult) float64) Series {
	return roundSeries(in, in.HTTP, func(h *HTTPResult) int { return h.Round },
		func(h *HTTPResult) bool { return h.Name == server && h.Sessions == n }, f)
}

// webSeries is a figure of the web's load on one API.
func (in ReportInput) webSeries(api string, f func(*WebResult) float64) Series {
	return roundSeries(in, in.Web, func(w *WebResult) int { return w.Round },
		func(w *WebResult) bool { return w.API == api }, f)
}

// The servers of the HTTP rows, as compare.sh names them; the reference
// is ReportInput.Ref, as on stdio.
const (
	HTTPOurs           = "agentapp serve --http"
	HTTPOursStateless  = HTTPOurs + " --stateless"
	HTTPFloor          = "Go SDK floor"
	HTTPFloorStateless = HTTPFloor + " --stateless"
)

// TSFloor is the zero-work stdio server of the TypeScript SDK client's
// rows (bench/cmd/stdiofloor), as compare.sh names it: it answers with
// agentapp's own bytes and does nothing else, so what the client reaches
// on it is the most any server reaches through that client.
const TSFloor = "zero-work server (bench/cmd/stdiofloor)"

// HTTPSessionCounts are the loads of the HTTP rows; the targets are at
// HTTPTargetSessions.
var (
	HTTPSessionCounts  = []int{1, 16, 256}
	HTTPTargetSessions = []int{16, 256}
)

// TurnBench is the Go benchmark of the per-turn host overhead.
const TurnBench = "BenchmarkTurnOverhead"

// Target is one of the performance goals BENCHMARKS.md reports on,
// checked on every round of a run.
type Target struct {
	What    string
	Goal    string
	Unit    string // "×" for ratios, else the unit of the figure
	Verdict Verdict
	Detail  string // the figures the ratio is made of
}

// The clients of the bridge rows, as mcpbench bridge and
// bench/tsclient.mjs name themselves.
const (
	OurClient = "agentapp mcpclient"
	TSClient  = "TypeScript SDK client"
)

// Targets evaluates the performance goals on the run: issue 19's on the
// harness, the bridge, `chat -p` and search, then issue 31's (newTargets).
// The rows the machine bounds are in Bounded.
func Targets(in ReportInput) []Target {
	var ts []Target
	ratio := func(what, goal string, g Goal, unit string, f func(*Result) float64) {
		a, b := in.series(in.Ours, f), in.series(in.Ref, f)
		ts = append(ts, Target{What: what, Goal: goal, Unit: "×", Verdict: Check(g, Ratios(a, b)),
			Detail: fmt.Sprintf("%s %s ÷ %s %s (medians)", FormatNum(a.Median()), unit, FormatNum(b.Median()), unit)})
	}
	ratio("tools/call p50", "≤ 0.5× the TS server's", Goal{Limit: 0.5}, "µs", func(r *Result) float64 { return r.LatencyP50US })
	ratio("tools/call p99", "≤ 0.2×", Goal{Limit: 0.2}, "µs", func(r *Result) float64 { return r.LatencyP99US })
	ratio("server CPU per tools/call (sequential)", "≤ 0.2×", Goal{Limit: 0.2}, "µs", func(r *Result) float64 { return r.CPUPerCallUS })
	ratio("server CPU per tools/call (pipelined)", "≤ 0.4×", Goal{Limit: 0.4}, "µs", func(r *Result) float64 { return r.CPUPerCallTputUS })
	ratio("throughput at 16 in flight", "≥ 3×", Goal{Limit: 3, AtLeast: true}, "calls/s", func(r *Result) float64 { return r.ThroughputCPS })
	ratio("cold start", "≤ 0.04×", Goal{Limit: 0.04}, "ms", func(r *Result) float64 { return r.ColdStartMS })
	ratio("resident memory after the run", "≤ 0.25×", Goal{Limit: 0.25}, "MiB", func(r *Result) float64 { return r.RSSMiB })

	_, servers := in.clientPairs()
	for _, srv := range servers {
		p50 := func(c *ClientResult) float64 { return c.P50US }
		a, b := in.clientSeries(OurClient, srv, p50), in.clientSeries(TSClient, srv, p50)
		ts = append(ts, Target{What: "bridge round trip p50, mcpclient ÷ TypeScript SDK client, to " + srv,
			Goal: "≤ 1×", Unit: "×", Verdict: Check(Goal{Limit: 1}, Ratios(a, b)),
			Detail: fmt.Sprintf("%s µs ÷ %s µs (medians)", FormatNum(a.Median()), FormatNum(b.Median()))})
	}
	if len(in.Spawns) > 0 {
		var s Series
		for _, sp := range in.Spawns {
			s = append(s, sp.MedianMS)
		}
		ts = append(ts, Target{What: "`chat -p` with the offline model, spawn → answer (median of each round's spawns)",
			Goal: "≤ 50 ms", Unit: "ms", Verdict: Check(Goal{Limit: 50}, s)})
	}
	if s := in.goSeries(KBSearchBench, "p50-ns"); len(s) > 0 {
		msS := make(Series, len(s))
		for i, v := range s {
			msS[i] = v / 1e6
		}
		ts = append(ts, Target{What: "knowledge-base search p50 at 100,000 chunks (SQLite)", Goal: "≤ 5 ms", Unit: "ms",
			Verdict: Check(Goal{Limit: 5}, msS)})
	}
	return append(ts, newTargets(in)...)
}

// newTargets are issue 31's goals: where users meet the server (through
// the TypeScript SDK client, over HTTP, on the web) and the host's own
// work per turn.
func newTargets(in ReportInput) []Target {
	var ts []Target
	pair := func(what, goal string, g Goal, unit string, a, b Series) {
		ts = append(ts, Target{What: what, Goal: goal, Unit: "×", Verdict: Check(g, Ratios(a, b)),
			Detail: fmt.Sprintf("%s %s ÷ %s %s (medians)", FormatNum(a.Median()), unit, FormatNum(b.Median()), unit)})
	}
	if len(in.TS) > 0 {
		tsr := func(what, goal string, g Goal, unit string, f func(*ClientResult) float64) {
			pair("TypeScript SDK client (stdio): "+what, goal, g, unit, in.tsSeries(in.Ours, "stdio", f), in.tsSeries(in.Ref, "stdio", f))
		}
		tsr("tools/call p50", "≤ 0.8×", Goal{Limit: 0.8}, "µs", func(c *ClientResult) float64 { return c.P50US })
		// The calls/s rows are bounded by the client's own CPU per call,
		// and the server's CPU per call by what a wake-up costs on the
		// machine: the zero-work server's figure, when measured, says how
		// far.
		bounded := func(what, goal string, g Goal, unit string, f func(*ClientResult) float64) {
			tsr(what, goal, g, unit, f)
			fl := in.tsSeries(TSFloor, "stdio", f)
			if len(fl) == 0 {
				return
			}
			v := Check(g, Ratios(fl, in.tsSeries(in.Ref, "stdio", f)))
			last := &ts[len(ts)-1]
			last.Detail += fmt.Sprintf("; the zero-work server through the same client: %s the reference (%s in %d of %d rounds), %s %s",
				formatSeries(v.Rounds, formatX), goal, v.Held, len(v.Rounds), FormatNum(fl.Median()), unit)
		}
		bounded("calls/s, sequential", "≥ 2×", Goal{Limit: 2, AtLeast: true}, "calls/s", func(c *ClientResult) float64 { return c.SequentialCPS })
		bounded("calls/s, 16 in flight", "≥ 2×", Goal{Limit: 2, AtLeast: true}, "calls/s", func(c *ClientResult) float64 { return c.ThroughputCPS })
		bounded("server CPU per call", "≤ 0.2×", Goal{Limit: 0.2}, "µs", func(c *ClientResult) float64 { return c.CPUPerCallUS })
		tsr("cold start, spawn → connected", "≤ 0.1×", Goal{Limit: 0.1}, "ms", func(c *ClientResult) float64 { return c.ColdStartMS })
	}
	if len(in.HTTP) > 0 {
		tput := func(h *HTTPResult) float64 { return h.ThroughputCPS }
		p99 := func(h *HTTPResult) float64 { return h.P99US }
		cpu := func(h *HTTPResult) float64 { return h.CPUPerCallUS }
		for _, n := range HTTPTargetSessions {
			pair(fmt.Sprintf("HTTP, %d sessions: calls/s, `serve --http` ÷ server-everything", n), "≥ 3×", Goal{Limit: 3, AtLeast: true}, "calls/s",
				in.httpSeries(HTTPOurs, n, tput), in.httpSeries(in.Ref, n, tput))
			pair(fmt.Sprintf("HTTP, %d sessions: p99, `serve --http` ÷ server-everything", n), "≤ 0.5×", Goal{Limit: 0.5}, "µs",
				in.httpSeries(HTTPOurs, n, p99), in.httpSeries(in.Ref, n, p99))
			pair(fmt.Sprintf("HTTP, %d sessions: server CPU per call, `serve --http` ÷ the bare Go SDK server", n), "≤ 1.25×", Goal{Limit: 1.25}, "µs",
				in.httpSeries(HTTPOurs, n, cpu), in.httpSeries(HTTPFloor, n, cpu))
			pair(fmt.Sprintf("HTTP, %d sessions: server CPU per call, `serve --http --stateless` ÷ the bare Go SDK server stateless", n), "≤ 1.25×", Goal{Limit: 1.25}, "µs",
				in.httpSeries(HTTPOursStateless, n, cpu), in.httpSeries(HTTPFloorStateless, n, cpu))
		}
	}
	if slices.ContainsFunc(in.TS, func(c *ClientResult) bool { return c.Transport == "http" }) {
		pair("TypeScript SDK client over HTTP, 16 sessions: p50", "≤ 0.5×", Goal{Limit: 0.5}, "µs",
			in.tsSeries(HTTPOurs, "http", func(c *ClientResult) float64 { return c.P50US }), in.tsSeries(in.Ref, "http", func(c *ClientResult) float64 { return c.P50US }))
		pair("TypeScript SDK client over HTTP, 16 sessions: calls/s", "≥ 1.5×", Goal{Limit: 1.5, AtLeast: true}, "calls/s",
			in.tsSeries(HTTPOurs, "http", func(c *ClientResult) float64 { return c.ThroughputCPS }), in.tsSeries(in.Ref, "http", func(c *ClientResult) float64 { return c.ThroughputCPS }))
	}
	if s := in.webSeries("chat", func(w *WebResult) float64 { return w.FirstEventP99MS }); len(in.Web) > 0 {
		ts = append(ts, Target{What: "web chat API, 200 turns at once (offline model): first-event p99", Goal: "≤ 50 ms", Unit: "ms",
			Verdict: Check(Goal{Limit: 50}, s)})
	}
	if s := in.goSeries(TurnBench, "p50-ns"); len(s) > 0 {
		msS := make(Series, len(s))
		for i, v := range s {
			msS[i] = v / 1e6
		}
		ts = append(ts, Target{What: "per-turn host overhead, 12 MCP servers and 100 tools (model and tools instant): p50", Goal: "≤ 1 ms", Unit: "ms",
			Verdict: Check(Goal{Limit: 1}, msS)})
	}
	return ts
}

// Bounded are the rows that were targets until this machine and the
// storage engine were shown to bound them (bench/NOTES.md has the
// measurements): still measured every round, with the limit stated.
func Bounded(in ReportInput) []Target {
	var ts []Target
	if len(in.Connect) > 0 {
		var s, single, conc Series
		n, cpus := 0, 0
		for _, c := range in.Connect {
			s, single, conc = append(s, c.Ratio), append(single, c.SlowestSingleMS), append(conc, c.ConcurrentMedianMS)
			n, cpus = c.N, c.CPUs
		}
		ts = append(ts, Target{What: fmt.Sprintf("connect %d stdio servers concurrently ÷ the slowest single connect", n),
			Goal: fmt.Sprintf("was ≤ 1.5×; a connect is CPU from start to end, so on %d CPUs the ratio cannot fall below %s × (CPU ÷ wall time of one connect)", cpus, FormatNum(float64(n)/float64(max(cpus, 1)))),
			Unit: "×", Verdict: Check(Goal{Limit: 1.5}, s),
			Detail: fmt.Sprintf("%s ms ÷ %s ms (medians)", FormatNum(conc.Median()), FormatNum(single.Median()))})
	}
	if s := in.goSeries(KBIngestBench, "MB/s"); len(s) > 0 {
		ts = append(ts, Target{What: "knowledge-base ingest of Markdown (SQLite; hand-written documents in batches, as `kb ingest DIR`)",
			Goal: "was ≥ 20 MB/s; SQLite's transaction alone, in the leanest layout it allows, takes the whole budget (BenchmarkIngestFloor/lean-tx)", Unit: "MB/s",
			Verdict: Check(Goal{Limit: 20, AtLeast: true}, s)})
	}
	return ts
}

// The knowledge-base benchmarks whose figures are targets.
const (
	KBSearchBench = "BenchmarkSearch100k"
	KBIngestBench = "BenchmarkIngest/docs-batch"
)

// shellJoin prints a command as it would be typed, quoting arguments with
// spaces.
func shellJoin(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"?*$") && !strings.HasPrefix(a, "$WORK") {
			parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(parts, " ")
}

// formatSeries prints a series as "median (min–max)".
func formatSeries(s Series, format func(float64) string) string {
	if len(s) == 0 {
		return "–"
	}
	lo, hi := s.Spread()
	if math.IsNaN(lo) || math.IsNaN(hi) || len(s) == 1 {
		return format(s.Median())
	}
	return fmt.Sprintf("%s (%s–%s)", format(s.Median()), format(lo), format(hi))
}

func formatX(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return FormatRatio(v, 1)
}

func formatRounds(s Series, format func(float64) string) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = format(v)
	}
	return strings.Join(parts, ", ")
}

// Report renders BENCHMARKS.md.
func Report(in ReportInput) string {
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	rounds := in.rounds()
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmarks\n\n")
	w("<!-- Generated by bench/compare.sh; edit bench/NOTES.md (analysis) and bench/WEB.md (the web front end) instead of this file. -->\n\n")
	w("`%s` against the reference TypeScript SDK server, in %d interleaved rounds of `%s` on %s (each round\n", in.Ours, len(rounds), in.Command, now.UTC().Format("2006-01-02 15:04 MST"))
	w("runs every measurement once, the servers in alternating order), with the Go benchmarks of the same run.\n")
	w("Every figure is the **median over the rounds, with the spread (smallest–largest round) in brackets**; a ratio\n")
	w("is taken within each round and then summarised the same way. A target counts as met only when it holds in\n")
	w("the median and in all rounds but one (%d of %d).\n\n", Needed(len(rounds)), len(rounds))
	m := in.Machine
	w("**Machine:** %d CPUs (%s), %s RAM, %s, %s.", m.CPUs, m.CPUModel, m.MemTotal, m.Kernel, m.GoArch)
	if in.Versions != "" {
		w(" %s.", strings.Join(strings.Fields(strings.ReplaceAll(in.Versions, "\n", "; ")), " "))
	}
	w("\n\n**Load:** ")
	var loads []string
	for _, r := range in.Results {
		if r.Name == in.Ours {
			loads = append(loads, strings.Fields(r.LoadBefore + " ?")[0])
		}
	}
	w("1-minute load average before each round's %s run: %s", in.Ours, strings.Join(loads, ", "))
	if in.ScriptLoad != "" {
		w("; %s", in.ScriptLoad)
	}
	if in.Elapsed != "" {
		w(". The whole script took %s", in.Elapsed)
	}
	w(".\n\n")

	targetRows := func(ts []Target, status bool) {
		for _, t := range ts {
			f := formatX
			if t.Unit != "×" {
				f = func(v float64) string { return FormatNum(v) + " " + t.Unit }
			}
			measured := formatSeries(t.Verdict.Rounds, f)
			if t.Detail != "" {
				measured += "; " + t.Detail
			}
			if status {
				w("| %s | %s | %s | %s | %s |\n", t.What, t.Goal, measured, formatRounds(t.Verdict.Rounds, f), t.Verdict.Status())
			} else {
				w("| %s | %s | %s | %s |\n", t.What, t.Goal, measured, formatRounds(t.Verdict.Rounds, f))
			}
		}
	}
	w("## Targets\n\n| target | goal | measured: median (spread) | each round | met |\n|---|---|---|---|---|\n")
	targetRows(Targets(in), true)
	w("\n")
	if b := Bounded(in); len(b) > 0 {
		w("### Measured, not targets: bounded by this machine and the storage engine\n\n")
		w("These were targets of the previous performance issue; bench/NOTES.md has the measurements that bound them.\n\n")
		w("| row | former goal and its bound | measured: median (spread) | each round |\n|---|---|---|---|\n")
		targetRows(b, false)
		w("\n")
	}

	w("## MCP servers over stdio\n\n")
	w("| server | command | tool and arguments |\n|---|---|---|\n")
	seen := map[string]bool{}
	for _, r := range in.Results {
		if !seen[r.Name] {
			seen[r.Name] = true
			w("| %s | `%s` | `%s` `%s` |\n", r.Name, strings.Join(r.Command, " "), r.Tool, r.Args)
		}
	}
	w("\n| metric | %s | %s | %s ÷ %s |\n|---|---:|---:|---:|\n", in.Ours, in.Ref, in.Ours, in.Ref)
	var sample *Result
	for _, r := range in.Results {
		if r.Name == in.Ours {
			sample = r
			break
		}
	}
	for _, mt := range metrics {
		label := mt.label
		if strings.Contains(label, "%d") && sample != nil {
			n := sample.Calls
			switch {
			case strings.HasPrefix(label, "cold"):
				n = len(sample.ColdStartAllMS)
			case strings.HasPrefix(label, "throughput"):
				n = sample.Inflight
			}
			label = fmt.Sprintf(label, n)
		}
		a, c := in.series(in.Ours, mt.value), in.series(in.Ref, mt.value)
		w("| %s (%s) | %s | %s | %s |\n", label, mt.unit, formatSeries(a, FormatNum), formatSeries(c, FormatNum), formatSeries(Ratios(a, c), formatX))
	}
	w("\nRatios below 1 favour %s for every row but throughput.\n\n", in.Ours)

	if len(in.Clients) > 0 {
		clients, servers := in.clientPairs()
		w("## Client round trips: the chat's bridge against the TypeScript SDK client\n\n")
		w("Sequential `tools/call` from the client's call to its result, after 200 warm-up calls, on the same server\n")
		w("binary and tool as above: `mcpbench bridge` (mcpclient.Connect and the adapted tool's Execute, as the chat\n")
		w("calls it) and `bench/tsclient.mjs` (the SDK's Client over StdioClientTransport, `callTool`).\n\n")
		w("| client | server | p50 (µs) | p99 (µs) | mean (µs) | connect (ms) |\n|---|---|---:|---:|---:|---:|\n")
		for _, srv := range servers {
			for _, cl := range clients {
				f := func(g func(*ClientResult) float64) string {
					return formatSeries(in.clientSeries(cl, srv, g), FormatNum)
				}
				w("| %s | %s | %s | %s | %s | %s |\n", cl, srv, f(func(c *ClientResult) float64 { return c.P50US }),
					f(func(c *ClientResult) float64 { return c.P99US }), f(func(c *ClientResult) float64 { return c.MeanUS }),
					f(func(c *ClientResult) float64 { return c.ConnectMS }))
			}
		}
		w("\n")
	}
	if len(in.Spawns) > 0 {
		sp := in.Spawns[0]
		w("## `chat -p`, spawn to answer\n\n`%s`, %d spawns per round one after the other, from just before the spawn to the\n", shellJoin(sp.Command), sp.Runs)
		w("exit with the answer (it must contain `%s`). Per round, the median and the spread of its spawns:\n\n| round | median (ms) | fastest–slowest (ms) |\n|---|---:|---:|\n", sp.Expect)
		for _, s := range in.Spawns {
			lo, hi := Series(s.AllMS).Spread()
			w("| %d | %s | %s–%s |\n", s.Round, FormatNum(s.MedianMS), FormatNum(lo), FormatNum(hi))
		}
		w("\n")
	}
	if len(in.Connect) > 0 {
		c0 := in.Connect[0]
		w("## Connecting %d stdio servers\n\n`mcpclient.Connect` (spawn, initialize, tools/list, adapt) of `%s`, each with its own data\n", c0.N, strings.Join(c0.Command, " "))
		w("directory, first one at a time and then all %d at once; each round's figures are medians of %d repetitions.\n\n", c0.N, c0.Rounds)
		w("The last columns give what the cores allow: the CPU time of the concurrent connects (the harness's and the\n")
		w("servers', from getrusage) spread over every core, or the slowest single connect if that is longer. No\n")
		w("overlap can finish sooner, so a ratio to this floor near 1 means the connects run in parallel as far as\n")
		w("the machine lets them.\n\n")
		w("| round | slowest single (ms) | all %d concurrently (ms) | ratio | CPU of the concurrent connects (ms) | floor on %d CPUs (ms) | concurrent ÷ floor | load before |\n|---|---:|---:|---:|---:|---:|---:|---|\n", c0.N, c0.CPUs)
		for _, c := range in.Connect {
			w("| %d | %s | %s | %.2f× | %s | %s | %.2f× | %s |\n", c.Round, FormatNum(c.SlowestSingleMS), FormatNum(c.ConcurrentMedianMS), c.Ratio,
				FormatNum(c.ConcurrentCPUMS), FormatNum(c.FloorMS), c.FloorRatio, c.LoadBefore)
		}
		w("\n")
	}

	reportTS(in, w)
	reportHTTP(in, w)
	reportWeb(in, w)

	w("## Go benchmarks (same run)\n\n")
	w("One `go test -bench` run each, except the knowledge-base ones and the per-turn overhead, repeated once per round (`-count`): for those the\n")
	w("figure is the median with the spread.\n\n")
	w("| what | benchmark | time/op | other | allocs/op | B/op |\n|---|---|---:|---|---:|---:|\n")
	rows := []struct{ what, name string }{
		{"per-turn host overhead: one `chat -p` turn (Chat.Ask) with 12 MCP servers and 100 tools, guards on, the session in SQLite; model and tools instant", TurnBench},
		{"agent loop overhead per step (scripted model, no-op tool)", "BenchmarkRunStep"},
		{"bridge round trip, in-process (SDK in-memory transport)", "BenchmarkBridgeInProcess"},
		{"bridge round trip, over stdio to `agentapp serve`", "BenchmarkBridgeStdio"},
		{"server alone: tools/call over OS pipes, raw JSON-RPC client (mcpserver's stdio transport with the direct tools/call path, as `serve`)", "BenchmarkServerToolsCallRaw"},
		{"the same through the SDK's request path (mcpserver's transport, no direct path)", "BenchmarkServerToolsCallRawSDKPath"},
		{"the same on the Go SDK's IOTransport (SDK transport and request path)", "BenchmarkServerToolsCallRawSDKTransport"},
		{"server alone, 16 calls in flight (as `serve`)", "BenchmarkServerToolsCallRawPipelined"},
		{"the same through the SDK's request path", "BenchmarkServerToolsCallRawPipelinedSDKPath"},
		{"bare Go SDK server, trivial echo tool, same pipes and client (the SDK's floor)", "BenchmarkSDKEchoRaw"},
		{"the same echo server on mcpserver's stdio transport", "BenchmarkSDKEchoRawIOTransport"},
		{"server in memory (io.Pipe, one process), raw client, as `serve` answers", "BenchmarkToolsCallInMemoryDirect"},
		{"the same through the SDK's request path", "BenchmarkToolsCallInMemorySDKPath"},
		{"server + SDK client in memory (SDK in-memory transport)", "BenchmarkToolsCallGetOrderStatus"},
		{"knowledge-base search, 10,000 chunks, k=5", "BenchmarkSearch/k=5"},
		{"knowledge-base search, 100,000 chunks, k=5 (queries of common, rare and absent terms)", KBSearchBench},
		{"knowledge-base ingest, MB/s of input (docs: the hand-written test corpus and demo FAQ, 12 files, 14 KB, one Ingest each; docs-batch: the same in one IngestBatch, into a growing database; dir: 768 generated files, 1.3 MB, cut into batches as `kb ingest DIR` cuts them, into an empty knowledge base, then Optimize; zh, en: 20 generated documents, one Ingest each)", "BenchmarkIngest"},
		{"what docs-batch costs without the full-text index (prepare: the Go side alone; no-index: that and the transaction storing documents and chunks; lean-tx: the transaction alone of the leanest layout, one row per document and one postings blob per batch): the bounds for any index write path", "BenchmarkIngestFloor"},
	}
	for _, row := range rows {
		gs := Matching(in.GoBench, row.name)
		if len(gs) == 0 {
			w("| %s | `%s` | not run | | | |\n", row.what, row.name)
			continue
		}
		var names []string
		for _, g := range gs {
			if !slices.Contains(names, g.Name) {
				names = append(names, g.Name)
			}
		}
		for i, name := range names {
			what := row.what
			if i > 0 {
				what = "″" // the same as the row above
			}
			ns := func(v float64) string { return FormatNs(v) }
			num := func(v float64) string { return fmt.Sprintf("%.0f", v) }
			var other []string
			if s := in.goSeries(name, "MB/s"); len(s) > 0 {
				other = append(other, formatSeries(s, func(v float64) string { return fmt.Sprintf("%.2f", v) })+" MB/s")
			}
			for _, k := range []string{"p50-ns", "p99-ns"} {
				if s := in.goSeries(name, k); len(s) > 0 {
					other = append(other, strings.TrimSuffix(k, "-ns")+" "+formatSeries(s, ns))
				}
			}
			w("| %s | `%s` | %s | %s | %s | %s |\n", what, name, formatSeries(in.goSeries(name, "ns/op"), ns),
				strings.Join(other, ", "), formatSeries(in.goSeries(name, "allocs/op"), num), formatSeries(in.goSeries(name, "B/op"), num))
		}
	}
	if ip, st := Find(in.GoBench, "BenchmarkBridgeInProcess"), Find(in.GoBench, "BenchmarkBridgeStdio"); ip != nil && st != nil {
		w("\nBridge over stdio ÷ in-process: %s.", FormatRatio(st.Metrics["ns/op"], ip.Metrics["ns/op"]))
	}
	w("\n\n")

	b.WriteString(method)
	if in.Notes != "" {
		w("\n%s\n", strings.TrimSpace(in.Notes))
	}
	w("\n## Reproduce\n\n```sh\n%s\n```\n\n", in.Command)
	w("<details><summary>Raw results of this run (JSON lines, every round)</summary>\n\n```json\n")
	raw := func(v any) {
		j, _ := json.Marshal(v)
		w("%s\n", j)
	}
	for _, r := range in.Results {
		raw(r)
	}
	for _, c := range in.Clients {
		raw(c)
	}
	for _, s := range in.Spawns {
		raw(s)
	}
	for _, c := range in.Connect {
		raw(c)
	}
	for _, c := range in.TS {
		raw(c)
	}
	for _, h := range in.HTTP {
		raw(h)
	}
	for _, r := range in.Web {
		raw(r)
	}
	w("```\n\n</details>\n")
	for _, a := range in.Appendix {
		w("\n%s\n", strings.TrimSpace(a))
	}
	return b.String()
}

// ReadJSONLines decodes every non-empty line of path into a new T.
func ReadJSONLines[T any](path string) ([]*T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var vs []*T
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		v := new(T)
		if err := json.Unmarshal(line, v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		vs = append(vs, v)
	}
	return vs, nil
}

const method = `## How it is measured

- **Rounds:** compare.sh runs every measurement below once per round, ` + "`agentapp serve`" + ` first in odd rounds
  and the TypeScript server first in even ones (the two clients alternate the same way), so that a
  busy stretch of the shared machine lands on one round of both rather than on one server's series.
  A ratio is computed within each round; the report gives the median of the rounds and their spread.
- **Client round trips:** ` + "`mcpbench bridge`" + ` connects the server with ` + "`mcpclient.Connect`" + ` and times
  ` + "`Execute`" + ` of the adapted tool, which is what the chat's agent loop calls; ` + "`bench/tsclient.mjs`" + ` does the
  same with the official TypeScript SDK's Client and ` + "`callTool`" + ` (which validates ` + "`structuredContent`" + `
  against the tool's output schema). 200 warm-up calls, then 2,000 sequential ones, on the same server
  command and tool as the harness.
- **TypeScript SDK client rows:** ` + "`bench/tsclient.mjs`" + ` with the same client on both servers and a tool of the
  same kind (outputSchema and structuredContent); the server's CPU from its threads' schedstat, in
  nanoseconds. Node.js hands a child's stdio as a socketpair, not a pipe, so these rows measure the
  server reading a socket, as it does under every host built on that SDK.
- **HTTP rows:** ` + "`mcpbench http`" + ` on a server started for each load (see that section); the TypeScript SDK
  client over HTTP is ` + "`bench/tsclient.mjs --url`" + `, one client and session per simulated user.
- **Web rows:** ` + "`mcpbench web`" + `, 200 turns at once, 3 times per round after one untimed time on the fresh
  server (as the other rows warm up; its first-event p99 is reported beside the table), each session from its own
  loopback address.
- **chat -p:** ` + "`mcpbench spawn`" + ` runs the command 20 times per round, each in a process group of its own
  (killed after it exits), and times spawn to exit; a run counts only if the answer names the order's
  status.
- **Connecting 5 servers:** ` + "`mcpbench connect`" + `: per round, 3 repetitions of connecting the 5 one at a
  time and then all at once (each with its own data directory, warmed once); the round's figures are
  the medians of its repetitions.
- **Harness** (` + "`bench/cmd/mcpbench`" + `): speaks newline-delimited JSON-RPC itself, the same few lines
  of Go for both servers (no SDK client), so client overhead is small and equal. One goroutine reads
  the server's stdout, checks every response in one pass over the frame (valid JSON, the id of a
  request in flight, answered once, no error, no isError) and writes the next request itself: about
  15 µs of the harness's CPU per call or less on the 2-core machine, mostly the read and write system
  calls. Each server runs in a process group of its own, killed and reaped at the end, on error and
  on Ctrl-C.
- **Cold start:** from just before the spawn to the initialize response; median of 10 spawns. The
  harness then sends notifications/initialized and closes stdin.
- **Latency:** 2,000 sequential tools/call after 200 warm-up calls; the time from writing the request
  to reading its response.
- **Throughput:** 16 requests kept in flight on the one stdio connection (pipelined), 4,000 calls.
- **Server CPU per call:** utime+stime (and reaped children's) of every process in the server's group,
  from /proc/PID/stat before and after the 2,000 sequential calls, divided by 2,000 (10 ms clock
  ticks: about 1% resolution at these counts).
- **Memory:** VmRSS (and VmHWM) summed over the process group after the run, and VmRSS split into
  RssAnon (heap, stacks) and RssFile (pages mapped from the executable and libraries). For the
  TypeScript server that is the one node process; for agentapp, the one Go process.
- **Exit:** from closing the server's stdin to the exit of the process the harness started.
- The tools differ in work: getOrderStatus validates its arguments (JSON Schema, then in code), runs
  an SQLite query and returns text plus structured content; echo validates one string with zod and
  returns it. The comparison is conservative for agentapp.
`

// reportTS writes the TypeScript SDK client's row set.
func reportTS(in ReportInput, w func(string, ...any)) {
	if len(in.TS) == 0 {
		return
	}
	tool := map[string]string{}
	for _, c := range in.TS {
		if c.Transport == "stdio" {
			tool[c.Server] = fmt.Sprintf("`%s` `%s`", c.Tool, c.Args)
		}
	}
	w("## Through the official TypeScript SDK client\n\n")
	w("`bench/tsclient.mjs`: the SDK's `Client` (%s) over `StdioClientTransport`, the same client for both servers and a tool of the\n", "@modelcontextprotocol/sdk")
	w("same kind on each, with an `outputSchema` and `structuredContent` that the client validates: %s on %s, %s on %s.\n", tool[in.Ours], in.Ours, tool[in.Ref], in.Ref)
	w("2,000 sequential calls after 200 warm-up ones, then 4,000 with 16 in flight; the server's CPU is its threads' time on CPU\n")
	w("(`/proc/PID/task/*/schedstat`) over each phase; cold start is 5 spawns from the spawn to the end of the client's `connect`.\n\n")
	w("| metric | %s | %s | %s ÷ %s |\n|---|---:|---:|---:|\n", in.Ours, in.Ref, in.Ours, in.Ref)
	rows := []struct {
		label string
		f     func(*ClientResult) float64
	}{
		{"p50 (µs)", func(c *ClientResult) float64 { return c.P50US }},
		{"p99 (µs)", func(c *ClientResult) float64 { return c.P99US }},
		{"mean (µs)", func(c *ClientResult) float64 { return c.MeanUS }},
		{"calls/s, sequential", func(c *ClientResult) float64 { return c.SequentialCPS }},
		{"calls/s, 16 in flight", func(c *ClientResult) float64 { return c.ThroughputCPS }},
		{"server CPU per call, sequential (µs)", func(c *ClientResult) float64 { return c.CPUPerCallUS }},
		{"server CPU per call, 16 in flight (µs)", func(c *ClientResult) float64 { return c.CPUPerCallInflightUS }},
		{"cold start, spawn → connected (ms)", func(c *ClientResult) float64 { return c.ColdStartMS }},
	}
	for _, r := range rows {
		a, b := in.tsSeries(in.Ours, "stdio", r.f), in.tsSeries(in.Ref, "stdio", r.f)
		w("| %s | %s | %s | %s |\n", r.label, formatSeries(a, FormatNum), formatSeries(b, FormatNum), formatSeries(Ratios(a, b), formatX))
	}
	w("\n")
	if slices.ContainsFunc(in.TS, func(c *ClientResult) bool { return c.Server == TSFloor }) {
		w("The same client on `bench/cmd/stdiofloor`, a server that answers every call with the bytes `agentapp serve` answered\n")
		w("(captured from it at the start of the run) and does no other work: what the client reaches on it is the most any\n")
		w("server reaches through this client on this machine, since the client's own CPU per call then sets the pace; its\n")
		w("server CPU per call is what the reads, writes and wake-ups of a call cost here, the least any server spends.\n\n")
		w("| metric | %s | %s ÷ it | it ÷ %s |\n|---|---:|---:|---:|\n", TSFloor, in.Ours, in.Ref)
		for _, r := range rows {
			if r.label == "cold start, spawn → connected (ms)" {
				continue // its start says nothing of the client's
			}
			fl := in.tsSeries(TSFloor, "stdio", r.f)
			w("| %s | %s | %s | %s |\n", r.label, formatSeries(fl, FormatNum),
				formatSeries(Ratios(in.tsSeries(in.Ours, "stdio", r.f), fl), formatX), formatSeries(Ratios(fl, in.tsSeries(in.Ref, "stdio", r.f)), formatX))
		}
		for _, r := range []struct {
			label string
			f     func(*ClientResult) float64
		}{
			{"the client's CPU per call, sequential (µs)", func(c *ClientResult) float64 { return c.ClientCPUPerCallUS }},
			{"the client's CPU per call, 16 in flight (µs)", func(c *ClientResult) float64 { return c.ClientCPUPerCallInflightUS }},
		} {
			fl := in.tsSeries(TSFloor, "stdio", r.f)
			w("| %s | %s | %s | %s |\n", r.label, formatSeries(fl, FormatNum),
				formatSeries(Ratios(in.tsSeries(in.Ours, "stdio", r.f), fl), formatX), formatSeries(Ratios(fl, in.tsSeries(in.Ref, "stdio", r.f)), formatX))
		}
		w("\n")
	}
	if !slices.ContainsFunc(in.TS, func(c *ClientResult) bool { return c.Transport == "http" }) {
		return
	}
	w("Over streamable HTTP, 16 clients at once, each with its own session (`StreamableHTTPClientTransport`), each making\n")
	w("its calls one after another:\n\n| server | p50 (µs) | p99 (µs) | calls/s, all sessions | server CPU per call (µs) |\n|---|---:|---:|---:|---:|\n")
	for _, srv := range []string{HTTPOurs, in.Ref} {
		f := func(g func(*ClientResult) float64) string {
			return formatSeries(in.tsSeries(srv, "http", g), FormatNum)
		}
		w("| %s | %s | %s | %s | %s |\n", srv, f(func(c *ClientResult) float64 { return c.P50US }), f(func(c *ClientResult) float64 { return c.P99US }),
			f(func(c *ClientResult) float64 { return c.ThroughputCPS }), f(func(c *ClientResult) float64 { return c.CPUPerCallUS }))
	}
	w("\n")
}

// reportHTTP writes the streamable HTTP rows.
func reportHTTP(in ReportInput, w func(string, ...any)) {
	if len(in.HTTP) == 0 {
		return
	}
	w("## Streamable HTTP\n\n")
	w("`mcpbench http`: N sessions at once (each: initialize, notifications/initialized, then its calls one after another,\n")
	w("each waiting for its answer) on one keep-alive connection of its own, HTTP/1.1 written and read by the generator\n")
	w("itself (`net/http`'s client cost about 120 µs of CPU per call, taken from the server on this 2-core machine),\n")
	w("the answer read from JSON or an event stream and\n")
	w("checked (no error, no isError, structuredContent present). Each load runs on a server started for it. Servers:\n")
	w("`agentapp serve --http` (and `--stateless`), `server-everything streamableHttp` (stateful only), and\n")
	w("`bench/cmd/gosdkfloor`, a bare Go SDK server with one tool shaped like getOrderStatus answered from a map (the\n")
	w("floor for any server on that SDK). CPU is the server's threads' time on CPU over the measured calls; memory per\n")
	w("idle session is the server's RSS with the N sessions open and idle minus its RSS before, over N (stateful only;\n")
	w("at 1 session it is within the noise of page granularity).\n\n")
	var names []string
	for _, h := range in.HTTP {
		if !slices.Contains(names, h.Name) {
			names = append(names, h.Name)
		}
	}
	w("| sessions | server | calls/s | p50 (µs) | p99 (µs) | server CPU per call (µs) | memory per idle session (KiB) |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, n := range HTTPSessionCounts {
		for _, name := range names {
			f := func(g func(*HTTPResult) float64) string { return formatSeries(in.httpSeries(name, n, g), FormatNum) }
			mem := "–"
			if !strings.HasSuffix(name, "--stateless") {
				mem = f(func(h *HTTPResult) float64 { return h.MemPerSessionKiB })
			}
			w("| %d | %s | %s | %s | %s | %s | %s |\n", n, name, f(func(h *HTTPResult) float64 { return h.ThroughputCPS }),
				f(func(h *HTTPResult) float64 { return h.P50US }), f(func(h *HTTPResult) float64 { return h.P99US }),
				f(func(h *HTTPResult) float64 { return h.CPUPerCallUS }), mem)
		}
	}
	var resent int64
	for _, h := range in.HTTP {
		resent += h.Resent
	}
	if resent > 0 {
		w("\n%d requests over the whole run were sent again after the server closed their idle connection (see `mcpbench http`).\n", resent)
	}
	w("\n| sessions | calls/s, ours ÷ server-everything | p99, ours ÷ server-everything | CPU per call, ours ÷ Go SDK floor | stateless: CPU per call, ours ÷ Go SDK floor |\n|---:|---:|---:|---:|---:|\n")
	for _, n := range HTTPSessionCounts {
		r := func(a, b string, g func(*HTTPResult) float64) string {
			return formatSeries(Ratios(in.httpSeries(a, n, g), in.httpSeries(b, n, g)), formatX)
		}
		cpu := func(h *HTTPResult) float64 { return h.CPUPerCallUS }
		w("| %d | %s | %s | %s | %s |\n", n, r(HTTPOurs, in.Ref, func(h *HTTPResult) float64 { return h.ThroughputCPS }),
			r(HTTPOurs, in.Ref, func(h *HTTPResult) float64 { return h.P99US }), r(HTTPOurs, HTTPFloor, cpu), r(HTTPOursStateless, HTTPFloorStateless, cpu))
	}
	w("\n")
}

// reportWeb writes the web rows.
func reportWeb(in ReportInput, w func(string, ...any)) {
	if len(in.Web) == 0 {
		return
	}
	w0 := in.Web[0]
	w("## `agentapp web`, %d turns at once (offline model)\n\n", w0.Sessions)
	w("`mcpbench web` against a fresh `agentapp web --model offline` per API: %d sessions each send one message at once,\n", w0.Sessions)
	if w0.Warmup > 0 {
		w("%d times per round after %d untimed time(s) on the fresh server, and read the event stream to its end (the answer must\n", w0.Repeats, w0.Warmup)
		w("name the order's status). Each session\n")
	} else {
		w("%d times per round, and read the event stream to its end (the answer must name the order's status). Each session\n", w0.Repeats)
	}
	w("connects from a loopback address of its own (127.x.y.z), as separate browsers would: the server limits requests per\n")
	w("address. Chat API: POST /api/sessions, then POST /api/sessions/{id}/messages; /v1: POST /v1/chat/completions with\n")
	w("`\"stream\": true`. Times are from sending the message; memory per stream is the server's peak RSS during the turns\n")
	w("(sampled every 2 ms) minus its RSS before, over the turns at once.\n\n")
	w("| API | first event p50 (ms) | first event p99 (ms) | first text p50 (ms) | first text p99 (ms) | turns/s | server CPU per turn (µs) | memory per stream (KiB) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, api := range []string{"chat", "v1"} {
		f := func(g func(*WebResult) float64) string { return formatSeries(in.webSeries(api, g), FormatNum) }
		label := map[string]string{"chat": "chat API", "v1": "/v1/chat/completions"}[api]
		w("| %s | %s | %s | %s | %s | %s | %s | %s |\n", label, f(func(r *WebResult) float64 { return r.FirstEventP50MS }),
			f(func(r *WebResult) float64 { return r.FirstEventP99MS }), f(func(r *WebResult) float64 { return r.FirstTextP50MS }),
			f(func(r *WebResult) float64 { return r.FirstTextP99MS }), f(func(r *WebResult) float64 { return r.TurnsPerS }),
			f(func(r *WebResult) float64 { return r.CPUPerTurnUS }), f(func(r *WebResult) float64 { return r.MemPerStreamKiB }))
	}
	w("\n")
	if w0.Warmup > 0 {
		w("The first, untimed run on each fresh server (its lazy set-up: the input guard's patterns, the offline model's\n")
		w("tables, the heap's first pages) had a first-event p99 of %s ms on the chat API and %s ms on /v1.\n\n",
			formatSeries(in.webSeries("chat", func(r *WebResult) float64 { return r.ColdFirstEventP99MS }), FormatNum),
			formatSeries(in.webSeries("v1", func(r *WebResult) float64 { return r.ColdFirstEventP99MS }), FormatNum))
	}
}
