package mcpbench

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPercentileAndMedian(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond},
		{1, time.Millisecond}, {0, time.Millisecond}, {99.5, 100 * time.Millisecond}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("Percentile(1..100 ms, %v) = %v, want %v", c.p, got, c.want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its argument in place")
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("Percentile(nil) = %v", got)
	}
	if got := Percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	// 2,000 samples: p99 is the 1,980th smallest.
	ds = ds[:0]
	for i := range 2000 {
		ds = append(ds, time.Duration(2000-i))
	}
	if got := Percentile(ds, 99); got != 1980 {
		t.Errorf("p99 of 1..2000 = %v, want 1980", got)
	}
	if got := Median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("odd median %v", got)
	}
	if got := Median([]time.Duration{4, 1, 2, 3}); got != 2 { // (2+3)/2 truncated
		t.Errorf("even median %v", got)
	}
	if got := Median(nil); got != 0 {
		t.Errorf("empty median %v", got)
	}
}

func TestParseStat(t *testing.T) {
	// A command name with spaces and a parenthesis, as a process can set.
	line := "4242 (node (worker) x) S 4200 4242 4200 0 -1 4194560 1234 0 3 0 157 42 7 3 20 0 11 0 12345 1130000000 27000 18446744073709551615 0 0 0 0 0 0 0 4096 134234626 0 0 0 17 1 0 0 0 0 0\n"
	s, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != 4242 || s.PPID != 4200 || s.PGRP != 4242 || s.State != 'S' {
		t.Errorf("ids/state: %+v", s)
	}
	if s.UTime != 1570*time.Millisecond || s.STime != 420*time.Millisecond ||
		s.CUTime != 70*time.Millisecond || s.CSTime != 30*time.Millisecond {
		t.Errorf("times: %+v", s)
	}
	if s.CPU() != 2090*time.Millisecond {
		t.Errorf("CPU() = %v", s.CPU())
	}
	for _, bad := range []string{"", "12 no parens S 1 2", "12 (x) S 1", "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", "12 (y) S 1 2 3 4 5 6 7 8 9 10 eleven 12 13 14 15"} {
		if _, err := ParseStat([]byte(bad)); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
	// Our own stat parses and is plausible.
	raw, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc")
	}
	self, err := ParseStat(raw)
	if err != nil || self.PID != os.Getpid() || self.PPID != os.Getppid() {
		t.Errorf("/proc/self/stat: %+v %v", self, err)
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tnode\nUmask:\t0022\nState:\tS (sleeping)\nVmPeak:\t 1200000 kB\nVmHWM:\t  110000 kB\nVmRSS:\t  108000 kB\n" +
		"RssAnon:\t   90000 kB\nRssFile:\t   18000 kB\nRssShmem:\t       0 kB\nThreads:\t11\n"
	m, err := ParseStatus([]byte(status))
	if err != nil || m.RSS != 108000*1024 || m.HWM != 110000*1024 || m.RSSAnon != 90000*1024 || m.RSSFile != 18000*1024 {
		t.Errorf("ParseStatus = %+v, %v", m, err)
	}
	// A zombie has no Vm lines.
	if m, err := ParseStatus([]byte("Name:\tx\nState:\tZ (zombie)\n")); err != nil || m.RSS != 0 {
		t.Errorf("zombie: %+v %v", m, err)
	}
	if _, err := ParseStatus([]byte("VmRSS:\t 12 MB\n")); err == nil {
		t.Error("accepted a unit other than kB")
	}
}

func TestSampleGroupFakeProc(t *testing.T) {
	root := t.TempDir()
	write := func(pid, stat, status string) {
		dir := filepath.Join(root, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
		os.WriteFile(filepath.Join(dir, "status"), []byte(status), 0o644)
	}
	rest := " 0 -1 0 0 0 0 0 %s 0 0 20 0 1 0 1 1 1\n"
	write("100", "100 (sh) S 1 100 1"+strings.Replace(rest, "%s", "100 50 10", 1), "VmRSS:\t 1000 kB\nVmHWM:\t 2000 kB\n")
	write("101", "101 (node) R 100 100 1"+strings.Replace(rest, "%s", "200 25 0", 1), "VmRSS:\t 3000 kB\nVmHWM:\t 3000 kB\n")
	write("102", "102 (other) S 1 102 1"+strings.Replace(rest, "%s", "999 999 0", 1), "VmRSS:\t 9999 kB\n")
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	old := procRoot
	procRoot = root
	defer func() { procRoot = old }()
	g, err := SampleGroup(100)
	if err != nil {
		t.Fatal(err)
	}
	// utime+stime+cutime+cstime: (100+50+10+0) + (200+25+0+0) ticks.
	if len(g.PIDs) != 2 || g.CPU != 385*clockTick || g.RSS != 4000*1024 || g.HWM != 5000*1024 {
		t.Errorf("group 100: %+v", g)
	}
	if strings.Join(g.Names, ",") != "sh,node" {
		t.Errorf("names %v", g.Names)
	}
	if _, err := SampleGroup(555); err == nil {
		t.Error("an empty group must be an error")
	}
}

func TestFraming(t *testing.T) {
	params, err := ToolsCallParams("getOrderStatus", json.RawMessage(`{"orderId":"A-1024"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendRequest(nil, 7, "tools/call", params))
	want := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getOrderStatus","arguments":{"orderId":"A-1024"}}}` + "\n"
	if got != want {
		t.Errorf("AppendRequest:\n got %s want %s", got, want)
	}
	if got := string(AppendNotification(nil, "notifications/initialized", nil)); got != `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n" {
		t.Errorf("AppendNotification: %s", got)
	}
	if got := string(AppendErrorResponse(nil, json.RawMessage(`"r1"`), -32601, `no "roots"`)); got != `{"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"no \"roots\""}}`+"\n" {
		t.Errorf("AppendErrorResponse: %s", got)
	}
	for _, frame := range []string{got, want, string(AppendRequest(nil, 1, "initialize", InitializeParams))} {
		if !json.Valid([]byte(strings.TrimSpace(frame))) {
			t.Errorf("invalid JSON: %s", frame)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`, ``} {
		if _, err := ToolsCallParams("t", json.RawMessage(bad)); err == nil {
			t.Errorf("ToolsCallParams accepted %q", bad)
		}
	}

	// Reading: CRLF, blank lines, a long line past the reader's buffer, a
	// last line without a newline.
	long := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 5000) + `"}]}}`
	in := "\r\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\r\n\n" +
		`{"jsonrpc":"2.0","method":"notifications/message","params":{}}` + "\n" +
		long + "\n" +
		`{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	var msgs []Message
	for {
		f, err := ReadFrame(br, 1<<20)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeMessage(f)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4: %+v", len(msgs), msgs)
	}
	if id, ok := msgs[0].NumericID(); !msgs[0].IsResponse() || !ok || id != 1 {
		t.Errorf("first: %+v", msgs[0])
	}
	if msgs[1].IsResponse() || msgs[1].IsRequest() || msgs[1].Method != "notifications/message" {
		t.Errorf("notification: %+v", msgs[1])
	}
	if r, err := CheckToolResult(msgs[2]); err != nil || len(r.Content[0].Text) != 5000 {
		t.Errorf("long result: %v", err)
	}
	if !msgs[3].IsRequest() || string(msgs[3].ID) != `"s1"` {
		t.Errorf("server request: %+v", msgs[3])
	}
	if _, err := ReadFrame(bufio.NewReaderSize(strings.NewReader(long+"\n"), 16), 100); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("over the limit: %v", err)
	}
	// A line over the limit is read to its end, so the next frame is whole.
	br = bufio.NewReaderSize(strings.NewReader(long+"\r\n"+`{"id":1}`+"\n"), 16)
	if _, err := ReadFrame(br, 100); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("over the limit: %v", err)
	}
	if f, err := ReadFrame(br, 100); err != nil || string(f) != `{"id":1}` {
		t.Errorf("after a line over the limit: %q, %v", f, err)
	}
	// The limit counts the line ending.
	if f, err := ReadFrame(bufio.NewReaderSize(strings.NewReader(`{"id":12}`+"\n"), 16), 10); err != nil || string(f) != `{"id":12}` {
		t.Errorf("at the limit: %q, %v", f, err)
	}
	if _, err := ReadFrame(bufio.NewReaderSize(strings.NewReader(`{"id":12}`+"\r\n"), 16), 10); !errors.Is(err, ErrFrameTooLong) {
		t.Errorf("one over the limit: %v", err)
	}
	for _, bad := range []string{`not json`, `{"jsonrpc":"2.0"}`} {
		if _, err := DecodeMessage([]byte(bad)); err == nil {
			t.Errorf("DecodeMessage accepted %s", bad)
		}
	}
}

func TestCheckToolResult(t *testing.T) {
	for _, c := range []struct {
		m  Message
		ok bool
	}{
		{Message{ID: json.RawMessage("1"), Result: json.RawMessage(`{"content":[{"type":"text","text":"Echo: hi"}]}`)}, true},
		{Message{ID: json.RawMessage("1"), Result: json.RawMessage(`{"content":[{"type":"text","text":"no"}],"isError":true}`)}, false},
		{Message{ID: json.RawMessage("1"), Result: json.RawMessage(`{"content":[]}`)}, false},
		{Message{ID: json.RawMessage("1"), Error: &RPCError{Code: -32602, Message: "bad"}}, false},
	} {
		if _, err := CheckToolResult(c.m); (err == nil) != c.ok {
			t.Errorf("CheckToolResult(%s %v) = %v", c.m.Result, c.m.Error, err)
		}
	}
}

func TestParseGoBench(t *testing.T) {
	out := `goos: linux
pkg: github.com/agentapp/agentapp/kb
BenchmarkSearch/k=5-2         	     212	   5624812 ns/op	   2726715 p50-ns	  23343860 p99-ns	    6865 B/op	      87 allocs/op
BenchmarkIngest-2             	       4	 334150540 ns/op	   0.67 MB/s	 3168956 B/op	   27612 allocs/op
--- BENCH: BenchmarkSearch
    bench_test.go:141: corpus: 10000 chunks
PASS
pkg: github.com/agentapp/agentapp/agent
BenchmarkRunStep-2   	  225897	     14762 ns/op	    1232 B/op	      10 allocs/op
pkg: github.com/agentapp/agentapp/bench/agentappbench
BenchmarkServerToolsCallRaw-2   	2026/11/30 10:17:21 INFO knowledge base seeded with the demo FAQ documents=4
    2000	    479183 ns/op	  171141 B/op	     152 allocs/op
BenchmarkIngest/zh-2          	      12	 122517385 ns/op	   1.83 MB/s	 2012110 B/op	    9093 allocs/op
`
	bs := ParseGoBench(out)
	if len(bs) != 5 {
		t.Fatalf("%d benchmarks: %+v", len(bs), bs)
	}
	s := Find(bs, "BenchmarkSearch/k=5")
	if s == nil || s.Procs != 2 || s.N != 212 || s.Metrics["p99-ns"] != 23343860 || s.Pkg != "github.com/agentapp/agentapp/kb" {
		t.Errorf("search: %+v", s)
	}
	if in := Find(bs, "BenchmarkIngest"); in == nil || in.Metrics["MB/s"] != 0.67 {
		t.Errorf("ingest: %+v", in)
	}
	if r := Find(bs, "BenchmarkRunStep"); r == nil || r.Pkg != "github.com/agentapp/agentapp/agent" || r.Metrics["allocs/op"] != 10 {
		t.Errorf("runstep: %+v", r)
	}
	if r := Find(bs, "BenchmarkServerToolsCallRaw"); r == nil || r.N != 2000 || r.Metrics["ns/op"] != 479183 {
		t.Errorf("figures after a log line: %+v", r)
	}
	if m := Matching(bs, "BenchmarkIngest"); len(m) != 2 || m[1].Name != "BenchmarkIngest/zh" {
		t.Errorf("Matching: %+v", m)
	}
	if FormatNs(14762) != "14.8 µs" || FormatNs(5624812) != "5.62 ms" || FormatNs(12) != "12 ns" {
		t.Errorf("FormatNs: %s %s %s", FormatNs(14762), FormatNs(5624812), FormatNs(12))
	}
}

// roundsInput is a run of five rounds in which our p50 is half the
// reference's in four rounds and worse in one, our throughput 3.5× in the
// median but under 3× in two rounds, and everything else as given.
func roundsInput() ReportInput {
	in := ReportInput{Ours: "go", Ref: "ts"}
	p50 := []float64{100, 100, 400, 100, 90}
	tput := []float64{3500, 2000, 3500, 2900, 3600}
	for i := range 5 {
		in.Results = append(in.Results,
			&Result{Round: i + 1, Name: "go", ColdStartMS: 20, RSSMiB: 30, CPUPerCallUS: 100, CPUPerCallTputUS: 50,
				ThroughputCPS: tput[i], LatencyP50US: p50[i], LatencyP99US: 150, Inflight: 16, Calls: 2000},
			&Result{Round: i + 1, Name: "ts", ColdStartMS: 1000, RSSMiB: 100, CPUPerCallUS: 400, CPUPerCallTputUS: 100,
				ThroughputCPS: 1000, LatencyP50US: 200, LatencyP99US: 1000})
		in.Connect = append(in.Connect, &ConnectResult{Round: i + 1, N: 5, Ratio: []float64{1.2, 1.4, 1.6, 1.3, 1.1}[i]})
		in.Clients = append(in.Clients,
			&ClientResult{Round: i + 1, Client: OurClient, Server: "go", P50US: 90},
			&ClientResult{Round: i + 1, Client: TSClient, Server: "go", P50US: 100},
			&ClientResult{Round: i + 1, Client: OurClient, Server: "ts", P50US: []float64{120, 90, 130, 90, 90}[i]},
			&ClientResult{Round: i + 1, Client: TSClient, Server: "ts", P50US: 100})
		in.Spawns = append(in.Spawns, &SpawnResult{Round: i + 1, Runs: 1, Command: []string{"agentapp", "chat", "-p", "where is order A-1024?"}, MedianMS: []float64{40, 45, 60, 49, 52}[i], AllMS: []float64{40}})
	}
	for i, p := range []float64{3e6, 4e6, 6e6, 4.5e6, 7e6} {
		in.GoBench = append(in.GoBench, GoBench{Name: KBSearchBench, Metrics: map[string]float64{"ns/op": 1e6, "p50-ns": p}})
		in.GoBench = append(in.GoBench, GoBench{Name: KBIngestBench, Metrics: map[string]float64{"ns/op": 1e6, "MB/s": 15 + float64(i)}})
		in.GoBench = append(in.GoBench, GoBench{Name: TurnBench, Metrics: map[string]float64{"ns/op": 2e6, "p50-ns": []float64{4e5, 5e5, 1.2e6, 6e5, 7e5}[i], "p99-ns": 9e6}})
	}
	addNewRows(&in)
	return in
}

// addNewRows adds issue 31's row sets to roundsInput's five rounds: the
// TypeScript client's p50 is 0.75× in four rounds and 0.9× in one; its
// throughput, CPU and cold start meet their goals except sequential calls/s
// (1.8×); over HTTP ours is 4× the reference's calls/s at 16 sessions but
// 2.5× at 256, its p99 a third, its CPU 1.2× the floor's stateful and 1.5×
// stateless; the TypeScript client over HTTP is 0.4× at p50 and 1.6× in
// calls/s; the web's first-event p99 is 40 ms but 70 ms in two rounds.
func addNewRows(in *ReportInput) {
	for i := range 5 {
		r := i + 1
		in.TS = append(in.TS,
			&ClientResult{Round: r, Client: TSClient, Server: "go", Transport: "stdio", P50US: []float64{150, 150, 180, 150, 150}[i], P99US: 400,
				SequentialCPS: 1800, ThroughputCPS: 5000, CPUPerCallUS: 20, CPUPerCallInflightUS: 10, ColdStartMS: 30, Tool: "getOrderStatus", Args: json.RawMessage(`{"orderId":"A-1024"}`)},
			&ClientResult{Round: r, Client: TSClient, Server: "ts", Transport: "stdio", P50US: 200, P99US: 900,
				SequentialCPS: 1000, ThroughputCPS: 2000, CPUPerCallUS: 200, CPUPerCallInflightUS: 100, ColdStartMS: 400, Tool: "get-structured-content", Args: json.RawMessage(`{"location":"New York"}`)},
			&ClientResult{Round: r, Client: TSClient, Server: HTTPOurs, Transport: "http", Sessions: 16, P50US: 400, ThroughputCPS: 1600},
			&ClientResult{Round: r, Client: TSClient, Server: "ts", Transport: "http", Sessions: 16, P50US: 1000, ThroughputCPS: 1000})
		for _, n := range HTTPSessionCounts {
			oursTput := map[int]float64{1: 2000, 16: 8000, 256: 5000}[n]
			in.HTTP = append(in.HTTP,
				&HTTPResult{Round: r, Name: HTTPOurs, Sessions: n, ThroughputCPS: oursTput, P99US: 1000, CPUPerCallUS: 120, MemPerSessionKiB: 40},
				&HTTPResult{Round: r, Name: HTTPOursStateless, Sessions: n, ThroughputCPS: oursTput, P99US: 1000, CPUPerCallUS: 150},
				&HTTPResult{Round: r, Name: HTTPFloor, Sessions: n, ThroughputCPS: 9000, P99US: 900, CPUPerCallUS: 100, MemPerSessionKiB: 30},
				&HTTPResult{Round: r, Name: HTTPFloorStateless, Sessions: n, ThroughputCPS: 9000, P99US: 900, CPUPerCallUS: 100},
				&HTTPResult{Round: r, Name: "ts", Sessions: n, ThroughputCPS: 2000, P99US: 3000, CPUPerCallUS: 500, MemPerSessionKiB: 300})
		}
		in.Web = append(in.Web,
			&WebResult{Round: r, API: "chat", Sessions: 200, Repeats: 3, FirstEventP50MS: 10, FirstEventP99MS: []float64{40, 70, 40, 70, 40}[i], TurnsPerS: 2000, MemPerStreamKiB: 29},
			&WebResult{Round: r, API: "v1", Sessions: 200, Repeats: 3, FirstEventP50MS: 5, FirstEventP99MS: 20, TurnsPerS: 9000, MemPerStreamKiB: 5})
	}
}

func TestTargets(t *testing.T) {
	in := roundsInput()
	got := map[string]Verdict{}
	for _, tg := range Targets(in) {
		got[tg.What] = tg.Verdict
	}
	want := map[string]struct {
		met  bool
		held int
	}{
		"tools/call p50":                         {true, 4},  // 0.5× in four rounds, 2× in one
		"throughput at 16 in flight":             {false, 3}, // median 3.5×, but two rounds under 3×
		"cold start":                             {true, 5},  // 0.02×
		"resident memory after the run":          {false, 0}, // 0.3×
		"server CPU per tools/call (sequential)": {false, 0}, // 0.25×
		"server CPU per tools/call (pipelined)":  {false, 0}, // 0.5×
		"tools/call p99":                         {true, 5},  // 0.15×
		"bridge round trip p50, mcpclient ÷ TypeScript SDK client, to go":                  {true, 5},
		"bridge round trip p50, mcpclient ÷ TypeScript SDK client, to ts":                  {false, 3}, // median 0.9×, two rounds over
		"`chat -p` with the offline model, spawn → answer (median of each round's spawns)": {false, 3},
		"knowledge-base search p50 at 100,000 chunks (SQLite)":                             {false, 3}, // median 4.5 ms, 3 of 5

		"TypeScript SDK client (stdio): tools/call p50":                                                          {true, 4}, // 0.75× in four rounds, 0.9× in one
		"TypeScript SDK client (stdio): calls/s, sequential":                                                     {false, 0},
		"TypeScript SDK client (stdio): calls/s, 16 in flight":                                                   {true, 5},
		"TypeScript SDK client (stdio): server CPU per call":                                                     {true, 5},
		"TypeScript SDK client (stdio): cold start, spawn → connected":                                           {true, 5},
		"HTTP, 16 sessions: calls/s, `serve --http` ÷ server-everything":                                         {true, 5},
		"HTTP, 256 sessions: calls/s, `serve --http` ÷ server-everything":                                        {false, 0},
		"HTTP, 16 sessions: p99, `serve --http` ÷ server-everything":                                             {true, 5},
		"HTTP, 256 sessions: p99, `serve --http` ÷ server-everything":                                            {true, 5},
		"HTTP, 16 sessions: server CPU per call, `serve --http` ÷ the bare Go SDK server":                        {true, 5},
		"HTTP, 256 sessions: server CPU per call, `serve --http` ÷ the bare Go SDK server":                       {true, 5},
		"HTTP, 16 sessions: server CPU per call, `serve --http --stateless` ÷ the bare Go SDK server stateless":  {false, 0},
		"HTTP, 256 sessions: server CPU per call, `serve --http --stateless` ÷ the bare Go SDK server stateless": {false, 0},
		"TypeScript SDK client over HTTP, 16 sessions: p50":                                                      {true, 5},
		"TypeScript SDK client over HTTP, 16 sessions: calls/s":                                                  {true, 5},
		"web chat API, 200 turns at once (offline model): first-event p99":                                       {false, 3},
		"per-turn host overhead, 12 MCP servers and 100 tools (model and tools instant): p50":                    {true, 4}, // 1.2 ms in one round, median 0.6 ms: holds
	}
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no such target (have %v)", k, got)
			continue
		}
		if g.Met != v.met || g.Held != v.held || len(g.Rounds) != 5 {
			t.Errorf("%s: met=%v held=%d rounds=%v, want met=%v held=%d", k, g.Met, g.Held, g.Rounds, v.met, v.held)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d targets, want %d: %v", len(got), len(want), got)
	}
	if v := got["throughput at 16 in flight"]; v.Median != 3.5 {
		t.Errorf("throughput median ratio %v, want 3.5", v.Median)
	}
	if v := got["TypeScript SDK client (stdio): tools/call p50"]; v.Median != 0.75 {
		t.Errorf("TypeScript client p50 median ratio %v, want 0.75", v.Median)
	}
}

// TestBounded checks that the two machine-bound rows are measured, with
// their limits, and are no longer targets.
func TestBounded(t *testing.T) {
	in := roundsInput()
	for _, tg := range Targets(in) {
		if strings.Contains(tg.What, "connect 5") || strings.Contains(tg.What, "ingest") {
			t.Errorf("%q is still a target", tg.What)
		}
	}
	b := Bounded(in)
	if len(b) != 2 {
		t.Fatalf("%d bounded rows, want 2: %+v", len(b), b)
	}
	if b[0].Verdict.Held != 4 || !strings.Contains(b[0].Goal, "was ≤ 1.5×") || !strings.Contains(b[0].What, "connect 5") {
		t.Errorf("connect row: %+v", b[0])
	}
	if b[1].Verdict.Median != 17 || !strings.Contains(b[1].Goal, "was ≥ 20 MB/s") {
		t.Errorf("ingest row: %+v", b[1])
	}
}

func TestCheckAndSeries(t *testing.T) {
	s := Series{5, 1, 3, 2, 4}
	if s.Median() != 3 {
		t.Errorf("median %v", s.Median())
	}
	if lo, hi := s.Spread(); lo != 1 || hi != 5 {
		t.Errorf("spread %v–%v", lo, hi)
	}
	if m := (Series{1, 2, 3, 10}).Median(); m != 2.5 {
		t.Errorf("even median %v", m)
	}
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 5: 4, 7: 6} {
		if Needed(n) != want {
			t.Errorf("Needed(%d) = %d, want %d", n, Needed(n), want)
		}
	}
	// A missing round (NaN) never holds.
	r := Ratios(Series{1, 1, 1}, Series{2, 0, 2})
	if v := Check(Goal{Limit: 1}, r); v.Held != 2 || !v.Met {
		t.Errorf("ratios %v: %+v", r, v)
	}
	if v := Check(Goal{Limit: 1}, Series{0.5, 2, 0.5, 2, 0.5}); v.Met || v.Held != 3 {
		t.Errorf("3 of 5 must not be met: %+v", v)
	}
	if v := Check(Goal{Limit: 1}, Series{2, 2, 0.5, 0.5, 0.5}); v.Met {
		t.Errorf("median holds, 3 of 5: %+v", v)
	}
	if v := Check(Goal{Limit: 1}, nil); v.Met || v.Status() != "not measured" {
		t.Errorf("no rounds: %+v %s", v, v.Status())
	}
	if v := Check(Goal{Limit: 3, AtLeast: true}, Series{3, 4, 2.9, 5, 3}); !v.Met || v.Held != 4 {
		t.Errorf("at least: %+v", v)
	}
}

func TestReport(t *testing.T) {
	in := roundsInput()
	in.Notes = "## Analysis\n\nhand-written"
	in.Appendix = []string{"## The web front end (`agentapp web`)\n\nkept by hand\n"}
	out := Report(in)
	for _, want := range []string{
		"in 5 interleaved rounds",
		"| tools/call p50 | ≤ 0.5× the TS server's | 0.50× (0.45×–2.00×); 100 µs ÷ 200 µs (medians) | 0.50×, 0.50×, 2.00×, 0.50×, 0.45× | yes (4 of 5 rounds) |",
		"| throughput at 16 in flight | ≥ 3× | 3.50× (2.00×–3.60×)",
		"**no**: median holds, but only 3 of 5 rounds (needs 4)",
		"| tools/call latency p50 (2000 sequential) (µs) | 100 (90.0–400) | 200 (200–200) | 0.50× (0.45×–2.00×) |",
		"| agentapp mcpclient | ts | 90.0 (90.0–130) |",
		"## Analysis\n\nhand-written",
		"kept by hand",
		"`agentapp chat -p 'where is order A-1024?'`, 1 spawns per round",
		"| 3 | 60.0 | 40.0–40.0 |",
		"### Measured, not targets",
		"| connect 5 stdio servers concurrently ÷ the slowest single connect | was ≤ 1.5×",
		"## Through the official TypeScript SDK client",
		"`getOrderStatus` `{\"orderId\":\"A-1024\"}` on go, `get-structured-content` `{\"location\":\"New York\"}` on ts",
		"| p50 (µs) | 150 (150–180) | 200 (200–200) | 0.75× (0.75×–0.90×) |",
		"| cold start, spawn → connected (ms) | 30.0 (30.0–30.0) | 400 (400–400) | 0.075× (0.075×–0.075×) |",
		"| agentapp serve --http | 400 (400–400) |",
		"## Streamable HTTP",
		"| 256 | agentapp serve --http | 5000 (5000–5000) |",
		"| 256 | agentapp serve --http --stateless | 5000 (5000–5000) | 0 (0–0) | 1000 (1000–1000) | 150 (150–150) | – |",
		"| 16 | 4.00× (4.00×–4.00×) | 0.33× (0.33×–0.33×) | 1.20× (1.20×–1.20×) | 1.50× (1.50×–1.50×) |",
		"## `agentapp web`, 200 turns at once (offline model)",
		"| chat API | 10.0 (10.0–10.0) | 40.0 (40.0–70.0) |",
		"| per-turn host overhead: one `chat -p` turn",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The hand-written sections come after the generated figures, the web
	// section last.
	if a, w := strings.Index(out, "## Analysis"), strings.Index(out, "## The web front end"); a < 0 || w < a || w < strings.Index(out, "Raw results") {
		t.Errorf("sections out of order: analysis at %d, web at %d", a, w)
	}
}

// TestTSFloorCeiling checks that the zero-work server's rows, when
// measured, say beside the TypeScript client's calls/s targets how far a
// server could go, and fill the ceiling table.
func TestTSFloorCeiling(t *testing.T) {
	in := roundsInput()
	if strings.Contains(Report(in), TSFloor) {
		t.Fatal("the report names the zero-work server though it was not measured")
	}
	for i := range 5 {
		in.TS = append(in.TS, &ClientResult{Round: i + 1, Client: TSClient, Server: TSFloor, Transport: "stdio", P50US: 100, P99US: 300,
			SequentialCPS: []float64{2100, 1900, 2200, 2300, 1800}[i], ThroughputCPS: 6000, ClientCPUPerCallUS: 250, ClientCPUPerCallInflightUS: 50,
			CPUPerCallUS: []float64{30, 50, 30, 30, 30}[i]})
	}
	details := map[string]string{}
	for _, tg := range Targets(in) {
		details[tg.What] = tg.Detail
	}
	for what, want := range map[string]string{
		"TypeScript SDK client (stdio): calls/s, sequential":   "the zero-work server through the same client: 2.10× (1.80×–2.30×) the reference (≥ 2× in 3 of 5 rounds), 2100 calls/s",
		"TypeScript SDK client (stdio): calls/s, 16 in flight": "the zero-work server through the same client: 3.00× (3.00×–3.00×) the reference (≥ 2× in 5 of 5 rounds), 6000 calls/s",
		"TypeScript SDK client (stdio): server CPU per call":   "the zero-work server through the same client: 0.15× (0.15×–0.25×) the reference (≤ 0.2× in 4 of 5 rounds), 30.0 µs",
	} {
		if !strings.Contains(details[what], want) {
			t.Errorf("%s: detail %q\nwant it to hold %q", what, details[what], want)
		}
	}
	report := Report(in)
	for _, want := range []string{
		"| metric | " + TSFloor + " | go ÷ it | it ÷ ts |",
		"| calls/s, sequential | 2100 (1800–2300) | 0.86× (0.78×–1.00×) | 2.10× (1.80×–2.30×) |",
		"| the client's CPU per call, 16 in flight (µs) | 50.0 (50.0–50.0) |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(report, "| server CPU per call, sequential (µs) | 30.0 (30.0–50.0) | 0.67× (0.40×–0.67×) | 0.15× (0.15×–0.25×) |") {
		t.Error("the ceiling table lacks the server CPU row")
	}
	if strings.Contains(report, "| cold start, spawn → connected (ms) | –") {
		t.Error("the ceiling table has a cold-start row")
	}
}
