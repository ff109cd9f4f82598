package mcpbench

import (
	"encoding/json"
	"time"
)

// The result types carry no build tag, unlike the measuring code (which
// reads /proc and so is Linux-only): the report and table writers use them
// on every platform, and the repository must build for Windows and macOS.

// Result is the JSON object the harness prints for one server. Times are
// in milliseconds (_ms) or microseconds (_us), memory in MiB.
type Result struct {
	Round     int             `json:"round"` // of compare.sh's interleaved rounds, from 1
	Name      string          `json:"name"`
	Command   []string        `json:"command"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Calls     int             `json:"calls"`
	Warmup    int             `json:"warmup"`
	Inflight  int             `json:"inflight"`
	TputCalls int             `json:"throughput_calls"`

	ColdStartMS      float64   `json:"cold_start_ms"` // median
	ColdStartAllMS   []float64 `json:"cold_start_all_ms"`
	LatencyP50US     float64   `json:"latency_p50_us"`
	LatencyP90US     float64   `json:"latency_p90_us"`
	LatencyP99US     float64   `json:"latency_p99_us"`
	LatencyMaxUS     float64   `json:"latency_max_us"`
	LatencyMeanUS    float64   `json:"latency_mean_us"`
	ThroughputCPS    float64   `json:"throughput_calls_per_s"`
	CPUPerCallUS     float64   `json:"cpu_per_call_us"`           // over the sequential calls
	CPUPerCallTputUS float64   `json:"cpu_per_call_pipelined_us"` // over the throughput phase
	IdleCPUMS        float64   `json:"cpu_until_initialized_ms"`  // group CPU from spawn to initialized (main run)
	RSSMiB           float64   `json:"rss_mib"`                   // after the run, summed over the group
	PeakRSSMiB       float64   `json:"peak_rss_mib"`              // VmHWM summed over the group
	RSSAnonMiB       float64   `json:"rss_anon_mib"`              // the anonymous part of RSSMiB (heap, stacks)
	RSSFileMiB       float64   `json:"rss_file_mib"`              // the file-backed part (code and data mapped from the executable and libraries)
	Processes        []string  `json:"processes"`                 // the group's members after the run
	EOFExitMS        float64   `json:"eof_to_exit_ms"`            // after the run; -1: did not exit
	EOFExitIdleMS    float64   `json:"eof_to_exit_idle_ms"`       // median over the cold-start spawns
	Notifications    int64     `json:"notifications_received"`
	ServerRequests   int64     `json:"server_requests_refused"`
	SampleResult     string    `json:"sample_result"`
	LoadBefore       string    `json:"loadavg_before"`
	LoadAfter        string    `json:"loadavg_after"`
	Started          time.Time `json:"started"`
	DurationS        float64   `json:"duration_s"`
}

// ConnectResult is the JSON object of the connect measurement.
type ConnectResult struct {
	Round   int      `json:"round"`
	Name    string   `json:"name"`
	Command []string `json:"command"`
	N       int      `json:"servers"`
	Rounds  int      `json:"rounds"`
	// SingleMS[r][i] is server i connected alone in round r;
	// ConcurrentMS[r] the wall time of connecting all N at once.
	SingleMS     [][]float64 `json:"single_ms"`
	ConcurrentMS []float64   `json:"concurrent_ms"`
	// SlowestSingleMS is the median over rounds of the slowest single
	// connect; ConcurrentMedianMS the median concurrent time; Ratio the
	// second over the first.
	SlowestSingleMS    float64 `json:"slowest_single_ms"`
	ConcurrentMedianMS float64 `json:"concurrent_median_ms"`
	Ratio              float64 `json:"ratio"`
	// ConcurrentCPUMS is the CPU time (harness and servers) of connecting
	// all N at once, median over rounds; FloorMS the least wall time that
	// allows on CPUs cores (or the slowest single connect, if longer), and
	// FloorRatio the concurrent time over it.
	CPUs            int     `json:"cpus"`
	ConcurrentCPUMS float64 `json:"concurrent_cpu_ms"`
	FloorMS         float64 `json:"floor_ms"`
	FloorRatio      float64 `json:"floor_ratio"`
	LoadBefore      string  `json:"loadavg_before"`
	LoadAfter       string  `json:"loadavg_after"`
}

// ClientResult is one client's sequential tools/call round trips to one
// server: the chat's bridge (mcpclient) or the TypeScript SDK client
// (bench/tsclient.mjs, which prints the same JSON object). Latencies are
// from the client's call to its result, as the caller sees them.
type ClientResult struct {
	Round     int             `json:"round"`
	Client    string          `json:"client"`
	Server    string          `json:"server"`
	Command   []string        `json:"command"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"`
	Calls     int             `json:"calls"`
	Warmup    int             `json:"warmup"`
	ConnectMS float64         `json:"connect_ms"`
	P50US     float64         `json:"p50_us"`
	P99US     float64         `json:"p99_us"`
	MeanUS    float64         `json:"mean_us"`

	// Set by bench/tsclient.mjs only (the row set of the same TypeScript
	// client against both servers): Transport is "stdio" or "http";
	// CPUPerCallUS the server's CPU per sequential call (its threads'
	// schedstat), SequentialCPS the sequential calls per second; Inflight,
	// ThroughputCPS and CPUPerCallInflightUS the phase with calls in
	// flight; ColdStartMS the median of ColdStartAllMS, spawn to
	// connected; Sessions the clients at once over HTTP; the Client
	// fields are the client's own CPU (every thread of its process) per
	// call in each phase.
	Transport                  string    `json:"transport,omitempty"`
	CPUPerCallUS               float64   `json:"cpu_per_call_us,omitempty"`
	SequentialCPS              float64   `json:"sequential_cps,omitempty"`
	Inflight                   int       `json:"inflight,omitempty"`
	ThroughputCPS              float64   `json:"throughput_cps,omitempty"`
	CPUPerCallInflightUS       float64   `json:"cpu_per_call_inflight_us,omitempty"`
	ColdStartMS                float64   `json:"cold_start_ms,omitempty"`
	ColdStartAllMS             []float64 `json:"cold_start_all_ms,omitempty"`
	Sessions                   int       `json:"sessions,omitempty"`
	ClientCPUPerCallUS         float64   `json:"client_cpu_per_call_us,omitempty"`
	ClientCPUPerCallInflightUS float64   `json:"client_cpu_per_call_inflight_us,omitempty"`
}

// SpawnResult is a command run to completion several times, timed from
// just before the spawn to its exit with the expected output.
type SpawnResult struct {
	Round    int       `json:"round"`
	Name     string    `json:"name"`
	Command  []string  `json:"command"`
	Expect   string    `json:"expect"`
	Runs     int       `json:"runs"`
	MedianMS float64   `json:"median_ms"`
	AllMS    []float64 `json:"all_ms"`
}

// HTTPResult is one load of MCP sessions on a streamable HTTP server
// (mcpbench http): every session makes its calls one after another, all
// sessions at once. Memory is the server's VmRSS before the sessions and
// with all of them open and idle; CPU is its threads' time on CPU over the
// measured calls.
type HTTPResult struct {
	Round            int             `json:"round"`
	Name             string          `json:"name"`
	URL              string          `json:"url"`
	Mode             string          `json:"mode"` // stateful or stateless
	Sessions         int             `json:"sessions"`
	CallsPerSession  int             `json:"calls_per_session"`
	Warmup           int             `json:"warmup_per_session"`
	Calls            int             `json:"calls"`
	Tool             string          `json:"tool"`
	Args             json.RawMessage `json:"args"`
	ThroughputCPS    float64         `json:"throughput_calls_per_s"`
	P50US            float64         `json:"p50_us"`
	P99US            float64         `json:"p99_us"`
	MeanUS           float64         `json:"mean_us"`
	CPUPerCallUS     float64         `json:"cpu_per_call_us"`
	RSSBeforeMiB     float64         `json:"rss_before_mib"`
	RSSOpenMiB       float64         `json:"rss_sessions_open_mib"`
	MemPerSessionKiB float64         `json:"mem_per_idle_session_kib"` // stateful only
	Resent           int64           `json:"resent"`                   // requests sent again after their connection broke
	LoadBefore       string          `json:"loadavg_before"`
	LoadAfter        string          `json:"loadavg_after"`
}

// WebResult is one load of concurrent turns on `agentapp web` (mcpbench
// web): Sessions turns at once, Repeats times, on the chat API or /v1.
// Times are from sending the request; memory is the server's VmRSS growth
// at its peak during the turns, per turn in flight.
type WebResult struct {
	Round    int    `json:"round"`
	Name     string `json:"name"`
	API      string `json:"api"` // chat or v1
	Sessions int    `json:"sessions"`
	Repeats  int    `json:"repeats"`
	Warmup   int    `json:"warmup,omitempty"` // untimed runs of the turns before the timed ones
	// ColdFirstEventP99MS is the first-event p99 of the first warm-up
	// run, on the fresh server: kept so that the warm-up hides nothing.
	ColdFirstEventP99MS float64 `json:"cold_first_event_p99_ms,omitempty"`
	FirstEventP50MS     float64 `json:"first_event_p50_ms"`
	FirstEventP99MS     float64 `json:"first_event_p99_ms"`
	FirstTextP50MS      float64 `json:"first_text_p50_ms"`
	FirstTextP99MS      float64 `json:"first_text_p99_ms"`
	TurnsPerS           float64 `json:"turns_per_s"`
	CPUPerTurnUS        float64 `json:"cpu_per_turn_us"`
	RSSBeforeMiB        float64 `json:"rss_before_mib"`
	RSSPeakMiB          float64 `json:"rss_peak_mib"`
	MemPerStreamKiB     float64 `json:"mem_per_stream_kib"`
	LoadBefore          string  `json:"loadavg_before"`
}
