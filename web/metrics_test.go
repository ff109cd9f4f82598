package web

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// promMetrics is the Server's metrics as client_golang declared them, the
// reference the exposition writer is held to.
type promMetrics struct {
	reg                                     *prometheus.Registry
	requests, turns, toolCalls, approvals   *prometheus.CounterVec
	requestSeconds, turnSeconds, firstEvent *prometheus.HistogramVec
	openStreams                             prometheus.Gauge
}

func newPromMetrics() *promMetrics {
	buckets := prometheus.ExponentialBuckets(0.001, 4, 10)
	p := &promMetrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_requests_total", Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_request_duration_seconds", Help: "Time to serve a request, streams included, by route pattern.", Buckets: buckets,
		}, []string{"route"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_turns_total", Help: "Turns by API (chat, openai) and outcome (ok, error, cancelled, timeout).",
		}, []string{"api", "outcome"}),
		turnSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_turn_duration_seconds", Help: "Time of a whole turn, model and tool calls included.", Buckets: buckets,
		}, []string{"api"}),
		firstEvent: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_first_token_seconds", Help: "Time from a message to the first text of its answer.", Buckets: buckets,
		}, []string{"api"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_tool_calls_total", Help: "Tool calls by tool and outcome (ok, error, denied).",
		}, []string{"tool", "outcome"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_approvals_total", Help: "Approvals by decision (allowed, denied, timeout).",
		}, []string{"decision"}),
		openStreams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentapp_web_open_streams", Help: "Turns running now (event streams and completions).",
		}),
	}
	p.reg.MustRegister(p.requests, p.requestSeconds, p.turns, p.turnSeconds, p.firstEvent, p.toolCalls, p.approvals, p.openStreams)
	return p
}

func (p *promMetrics) text(t *testing.T) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(p.reg, promhttp.HandlerOpts{DisableCompression: true}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// ownText is the part of the exposition that is the Server's own series.
func ownText(m *metrics) string {
	var b []byte
	for _, f := range m.families() {
		b = f.appendText(b)
	}
	return string(b)
}

// TestMetricsMatchClientGolang drives the writer and client_golang through
// the same observations and requires the same text, byte for byte: label
// order and escaping, bucket bounds and their inclusive edges, value
// formatting, the order of families and series, families without series.
func TestMetricsMatchClientGolang(t *testing.T) {
	m, p := newMetrics(), newPromMetrics()
	check := func(when string) {
		t.Helper()
		if got, want := ownText(m), p.text(t); got != want {
			t.Fatalf("%s: the exposition differs from client_golang's\n--- ours\n%s\n--- client_golang\n%s", when, got, want)
		}
	}
	check("before any observation")

	values := []string{"getOrderStatus", `quo"te`, `back\slash`, "line\nfeed", "订单", "", "other", "a b", "\uFFFD"}
	durations := []float64{0, 0.0005, 0.001, 0.0010000001, 0.004, 0.05, 1.024, 3, 262.144, 300, 1e9, -1, math.Inf(1), math.NaN()}
	for i := range 200 {
		v, d := values[i%len(values)], durations[i%len(durations)]
		code := fmt.Sprint(200 + i%7*50)
		m.requests.WithLabelValues("GET /r/"+v, code).Inc()
		p.requests.WithLabelValues("GET /r/"+v, code).Inc()
		m.requestSeconds.WithLabelValues(v).Observe(d)
		p.requestSeconds.WithLabelValues(v).Observe(d)
		api := []string{"chat", "openai"}[i%2]
		m.turns.WithLabelValues(api, v).Inc()
		p.turns.WithLabelValues(api, v).Inc()
		if i%3 == 0 {
			m.turnSeconds.WithLabelValues(api).Observe(d * 1.5)
			p.turnSeconds.WithLabelValues(api).Observe(d * 1.5)
		}
		if i%5 == 0 {
			m.firstEvent.WithLabelValues(v).Observe(float64(i) / 1000)
			p.firstEvent.WithLabelValues(v).Observe(float64(i) / 1000)
		}
		m.toolCalls.WithLabelValues(v, []string{"ok", "error", "denied"}[i%3]).Inc()
		p.toolCalls.WithLabelValues(v, []string{"ok", "error", "denied"}[i%3]).Inc()
		if i%4 == 0 {
			m.approvals.WithLabelValues(v).Inc()
			p.approvals.WithLabelValues(v).Inc()
		}
		if i%3 == 2 {
			m.openStreams.Dec()
			p.openStreams.Dec()
		} else {
			m.openStreams.Inc()
			p.openStreams.Inc()
		}
		if i == 0 || i == 17 {
			check(fmt.Sprintf("after observation %d", i))
		}
	}
	check("after all observations")
}

// TestMetricsParse reads a whole scrape, the Go and process series
// included, with Prometheus's own parser, and checks the values that can
// be known.
func TestMetricsParse(t *testing.T) {
	m := newMetrics()
	m.toolCalls.WithLabelValues("bad\xffname", "ok").Inc()
	m.toolCalls.WithLabelValues("getOrderStatus", "ok").Inc()
	m.toolCalls.WithLabelValues("getOrderStatus", "ok").Inc()
	for _, d := range []float64{0.0005, 0.002, 0.002, 10} {
		m.turnSeconds.WithLabelValues("chat").Observe(d)
	}
	m.openStreams.Inc()

	rec := httptest.NewRecorder()
	m.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("content type %q", ct)
	}
	before := time.Now()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatalf("Prometheus cannot parse the scrape: %v\n%s", err, rec.Body)
	}

	calls := fams["agentapp_web_tool_calls_total"]
	if calls.GetType() != dto.MetricType_COUNTER || len(calls.Metric) != 2 {
		t.Fatalf("tool calls: %v", calls)
	}
	got := map[string]float64{}
	for _, s := range calls.Metric {
		got[label(s, "tool")] = s.GetCounter().GetValue()
	}
	if got["getOrderStatus"] != 2 || got["bad\uFFFDname"] != 1 {
		t.Errorf("tool calls %v, want getOrderStatus 2 and the invalid name, with U+FFFD, 1", got)
	}

	h := fams["agentapp_web_turn_duration_seconds"].Metric[0].GetHistogram()
	if h.GetSampleCount() != 4 || math.Abs(h.GetSampleSum()-10.0045) > 1e-9 {
		t.Errorf("histogram count %d sum %g, want 4 and 10.0045", h.GetSampleCount(), h.GetSampleSum())
	}
	cum := map[float64]uint64{}
	for _, b := range h.Bucket {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	if len(h.Bucket) != 11 || cum[0.001] != 1 || cum[0.004] != 3 || cum[4.096] != 3 || cum[16.384] != 4 || cum[math.Inf(1)] != 4 {
		t.Errorf("cumulative buckets %v", cum)
	}
	if g := fams["agentapp_web_open_streams"].Metric[0].GetGauge().GetValue(); g != 1 {
		t.Errorf("open streams %g, want 1", g)
	}

	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Errorf("%s missing", name)
			return 0
		}
		s := f.Metric[0]
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			return s.GetCounter().GetValue()
		case dto.MetricType_SUMMARY:
			return float64(s.GetSummary().GetSampleCount())
		}
		return s.GetGauge().GetValue()
	}
	if v := value("go_goroutines"); v < 1 {
		t.Errorf("go_goroutines %g", v)
	}
	if v := value("go_memstats_alloc_bytes"); v <= 0 {
		t.Errorf("go_memstats_alloc_bytes %g", v)
	}
	if v := value("go_memstats_sys_bytes"); v < value("go_memstats_heap_sys_bytes") {
		t.Errorf("go_memstats_sys_bytes %g below the heap's %g", v, value("go_memstats_heap_sys_bytes"))
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil { // the process series come from /proc
		if v := value("process_resident_memory_bytes"); v < 1<<20 {
			t.Errorf("process_resident_memory_bytes %g", v)
		}
		if v := value("process_open_fds"); v < 3 || v > value("process_max_fds") {
			t.Errorf("process_open_fds %g (max %g)", v, value("process_max_fds"))
		}
		if v := value("process_virtual_memory_bytes"); v < value("process_resident_memory_bytes") {
			t.Errorf("process_virtual_memory_bytes %g below the resident memory", v)
		}
		start := value("process_start_time_seconds")
		if started := time.Unix(int64(start), 0); started.After(before) || started.Before(before.Add(-time.Hour)) {
			t.Errorf("process_start_time_seconds %g is %s", start, started)
		}
		if value("process_cpu_seconds_total") < 0 {
			t.Error("negative CPU time")
		}
	}
	if value("go_gc_duration_seconds"); fams["go_info"].Metric[0].GetLabel()[0].GetValue() == "" {
		t.Error("go_info without a version")
	}
}

// TestRuntimeMetricsAgreeWithClientGolang holds the Go and process series
// to client_golang's collectors: each one written here is one of theirs,
// with the same type and help, and the values that cannot move between two
// scrapes are equal.
func TestRuntimeMetricsAgreeWithClientGolang(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	theirs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	ref := map[string]*dto.MetricFamily{}
	for _, f := range theirs {
		ref[f.GetName()] = f
	}
	m := newMetrics()
	p := expfmt.NewTextParser(model.UTF8Validation)
	ours, err := p.TextToMetricFamilies(bytes.NewReader(m.exposition()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name, f := range ours {
		if strings.HasPrefix(name, "agentapp_") {
			continue
		}
		names = append(names, name)
		r := ref[name]
		if r == nil {
			if name == "go_threads" {
				continue // theirs counts threads ever created, from a profile
			}
			t.Errorf("%s is not one of client_golang's", name)
			continue
		}
		if f.GetType() != r.GetType() {
			t.Errorf("%s is a %s, client_golang's a %s", name, f.GetType(), r.GetType())
		}
		if name != "go_threads" && f.GetHelp() != r.GetHelp() {
			t.Errorf("%s help %q, client_golang's %q", name, f.GetHelp(), r.GetHelp())
		}
	}
	_, statErr := os.Stat("/proc/self/stat")
	for _, name := range []string{"process_max_fds", "process_start_time_seconds", "process_virtual_memory_max_bytes", "go_sched_gomaxprocs_threads"} {
		if statErr != nil && strings.HasPrefix(name, "process_") {
			continue // no /proc: the process series are not written
		}
		if ours[name] == nil {
			t.Errorf("%s missing", name)
			continue
		}
		if got, want := ours[name].Metric[0].GetGauge().GetValue(), ref[name].Metric[0].GetGauge().GetValue(); got != want {
			t.Errorf("%s = %g, client_golang's %g", name, got, want)
		}
	}
	if got, want := ours["go_info"].Metric[0].String(), ref["go_info"].Metric[0].String(); got != want {
		t.Errorf("go_info %s, client_golang's %s", got, want)
	}
	slices.Sort(names)
	t.Logf("Go and process series: %s", strings.Join(names, " "))
	if statErr == nil && len(names) < 25 {
		t.Errorf("only %d Go and process series", len(names))
	}
}

// TestMetricsFoldManyToolNames: a server offering thousands of tools must
// not grow the series without bound; the names past the cap are counted
// under "other" and no call is lost.
func TestMetricsFoldManyToolNames(t *testing.T) {
	m := newMetrics()
	const tools = 3 * maxSeries
	for i := range tools {
		m.toolCalls.WithLabelValues(fmt.Sprintf("tool%04d", i), "ok").Inc()
		m.toolCalls.WithLabelValues(fmt.Sprintf("tool%04d", i), "denied").Inc()
	}
	m.toolCalls.WithLabelValues("tool0000", "ok").Inc() // known before the cap: still its own
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(ownText(m)))
	if err != nil {
		t.Fatal(err)
	}
	series := fams["agentapp_web_tool_calls_total"].Metric
	if len(series) > maxSeries+2 {
		t.Errorf("%d series for %d tools, want at most %d", len(series), tools, maxSeries+2)
	}
	total := map[string]float64{}
	byTool := map[string]float64{}
	for _, s := range series {
		total[label(s, "outcome")] += s.GetCounter().GetValue()
		byTool[label(s, "tool")+"/"+label(s, "outcome")] = s.GetCounter().GetValue()
	}
	if total["ok"] != tools+1 || total["denied"] != tools {
		t.Errorf("totals %v, want ok %d and denied %d", total, tools+1, tools)
	}
	if byTool["tool0000/ok"] != 2 || byTool["other/ok"] == 0 || byTool["other/denied"] == 0 {
		t.Errorf("series %v", byTool)
	}
}

// TestMetricsConcurrent counts from many goroutines at once (run it with
// -race): nothing is lost, and a scrape while they run is well formed.
func TestMetricsConcurrent(t *testing.T) {
	m := newMetrics()
	var wg sync.WaitGroup
	const workers, each = 8, 2000
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				m.requests.WithLabelValues("GET /x", fmt.Sprint(200+i%3)).Inc()
				m.requestSeconds.WithLabelValues(fmt.Sprint("r", w%2)).Observe(0.25)
				m.openStreams.Inc()
				m.openStreams.Dec()
			}
		}()
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := p.TextToMetricFamilies(bytes.NewReader(m.exposition())); err != nil {
		t.Errorf("a scrape during the updates: %v", err)
	}
	wg.Wait()
	fams, err := p.TextToMetricFamilies(bytes.NewReader(m.exposition()))
	if err != nil {
		t.Fatal(err)
	}
	var n float64
	for _, s := range fams["agentapp_web_requests_total"].Metric {
		n += s.GetCounter().GetValue()
	}
	var count uint64
	var sum float64
	for _, s := range fams["agentapp_web_request_duration_seconds"].Metric {
		count += s.GetHistogram().GetSampleCount()
		sum += s.GetHistogram().GetSampleSum()
	}
	if n != workers*each || count != workers*each || sum != workers*each*0.25 {
		t.Errorf("requests %g, observations %d summing to %g; want %d, %d, %g", n, count, sum, workers*each, workers*each, workers*each*0.25)
	}
	if g := fams["agentapp_web_open_streams"].Metric[0].GetGauge().GetValue(); g != 0 {
		t.Errorf("open streams %g, want 0", g)
	}
}

// TestMetricsHandlerHead answers HEAD with the headers only.
func TestMetricsHandlerHead(t *testing.T) {
	rec := httptest.NewRecorder()
	newMetrics().handler().ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || len(body) != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d bytes, length %q", rec.Code, len(body), rec.Header().Get("Content-Length"))
	}
}

// BenchmarkMetricsHotPath is the cost a request or tool call pays.
func BenchmarkMetricsHotPath(b *testing.B) {
	m := newMetrics()
	b.ReportAllocs()
	for b.Loop() {
		m.requests.WithLabelValues("POST /api/sessions/{id}/messages", "200").Inc()
		m.requestSeconds.WithLabelValues("POST /api/sessions/{id}/messages").Observe(0.012)
		m.toolCalls.WithLabelValues("getOrderStatus", "ok").Inc()
	}
}

func label(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// BenchmarkMetricsHotPathClientGolang is the same with client_golang, for
// comparison.
func BenchmarkMetricsHotPathClientGolang(b *testing.B) {
	p := newPromMetrics()
	b.ReportAllocs()
	for b.Loop() {
		p.requests.WithLabelValues("POST /api/sessions/{id}/messages", "200").Inc()
		p.requestSeconds.WithLabelValues("POST /api/sessions/{id}/messages").Observe(0.012)
		p.toolCalls.WithLabelValues("getOrderStatus", "ok").Inc()
	}
}
