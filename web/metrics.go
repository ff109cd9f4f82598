package web

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// metrics are the Server's own series, written in the Prometheus text
// exposition format (version 0.0.4) by this file rather than by
// client_golang: its package initialisers, and the protobuf ones it pulls
// in, would run in every agentapp process, `serve` included, for a page
// only `web` serves. Two Servers in one process (tests, an embedder) never
// share or clash.
type metrics struct {
	requests       *counterVec
	requestSeconds *histogramVec
	turns          *counterVec
	turnSeconds    *histogramVec
	firstEvent     *histogramVec
	toolCalls      *counterVec
	approvals      *counterVec
	openStreams    *gauge
	procStart      func() (float64, bool)
	// tokens are the host's token counters (usage_metrics.go); nil
	// until the Server has its host.
	tokens family
}

// maxSeries bounds the series of one labelled metric. Tool names come from
// MCP servers, and a hostile one can offer thousands: past the bound, new
// values of a vector's open-ended labels are counted under "other", so a
// scrape stays small and the server's memory bounded.
const maxSeries = 256

// otherLabel is the value that stands for every label value past maxSeries.
const otherLabel = "other"

// latencyBuckets are the upper bounds of the duration histograms: 1 ms to
// about 4 minutes in steps of 4, computed as client_golang's
// ExponentialBuckets(0.001, 4, 10) does, so the bounds print the same.
func latencyBuckets() []float64 {
	b := make([]float64, 10)
	v := 0.001
	for i := range b {
		b[i] = v
		v *= 4
	}
	return b
}

func newMetrics() *metrics {
	return &metrics{
		requests: newCounterVec("agentapp_web_requests_total", "HTTP requests by route pattern and status code.",
			[]string{"route", "code"}, nil),
		requestSeconds: newHistogramVec("agentapp_web_request_duration_seconds", "Time to serve a request, streams included, by route pattern.",
			latencyBuckets(), []string{"route"}, nil),
		turns: newCounterVec("agentapp_web_turns_total", "Turns by API (chat, openai) and outcome (ok, error, cancelled, timeout).",
			[]string{"api", "outcome"}, nil),
		turnSeconds: newHistogramVec("agentapp_web_turn_duration_seconds", "Time of a whole turn, model and tool calls included.",
			latencyBuckets(), []string{"api"}, nil),
		firstEvent: newHistogramVec("agentapp_web_first_token_seconds", "Time from a message to the first text of its answer.",
			latencyBuckets(), []string{"api"}, nil),
		// Only the tool name is open-ended: the outcome stays exact when
		// the names fold.
		toolCalls: newCounterVec("agentapp_web_tool_calls_total", "Tool calls by tool and outcome (ok, error, denied).",
			[]string{"tool", "outcome"}, []string{"tool"}),
		approvals: newCounterVec("agentapp_web_approvals_total", "Approvals by decision (allowed, denied, timeout).",
			[]string{"decision"}, nil),
		openStreams: &gauge{name: "agentapp_web_open_streams", help: "Turns running now (event streams and completions)."},
		procStart:   sync.OnceValues(processStartTime),
	}
}

// families lists the Server's own metrics in name order, as client_golang
// writes them.
func (m *metrics) families() []family {
	fs := []family{m.requests, m.requestSeconds, m.turns, m.turnSeconds, m.firstEvent, m.toolCalls, m.approvals, m.openStreams}
	if m.tokens != nil {
		fs = append(fs, m.tokens)
	}
	slices.SortFunc(fs, func(a, b family) int { return strings.Compare(a.metricName(), b.metricName()) })
	return fs
}

// exposition is the whole text of a scrape: the Server's metrics in name
// order, then the Go runtime's and the process's.
func (m *metrics) exposition() []byte {
	b := make([]byte, 0, 8<<10)
	for _, f := range m.families() {
		b = f.appendText(b)
	}
	b = appendGoMetrics(b)
	return appendProcessMetrics(b, m.procStart)
}

// exposition0_0_4 is the content type of the text format.
const exposition0_0_4 = "text/plain; version=0.0.4; charset=utf-8"

func (m *metrics) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text := m.exposition()
		w.Header().Set("Content-Type", exposition0_0_4)
		w.Header().Set("Content-Length", strconv.Itoa(len(text)))
		if r.Method == http.MethodHead {
			return
		}
		w.Write(text)
	})
}

// instrument counts and times every request by the pattern that served it.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "other"
		}
		m.requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		m.requestSeconds.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// statusWriter remembers the status code; Unwrap keeps Flush and the
// deadlines of http.ResponseController working through it.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// family is one metric with its HELP and TYPE lines.
type family interface {
	metricName() string
	appendText(b []byte) []byte
}

// labelSet is what counter and histogram vectors share: the label names,
// the series by their label values, and the cap on their number.
type labelSet struct {
	name, help string
	labels     []string          // in the order callers pass values
	byName     []int             // indexes into labels, in label-name order (the exposition's)
	fold       []bool            // labels whose values become otherLabel past maxSeries
	newHist    func() *histogram // nil for a counter

	mu     sync.RWMutex
	series map[string]*series
}

// series is one label combination's counter or histogram. The vectors are
// not generic over the two: escape analysis cannot see through a generic
// method, and every label slice would then be allocated.
type series struct {
	values []string
	counter
	hist *histogram
}

func newLabelSet(name, help string, labels, open []string, newHist func() *histogram) labelSet {
	byName := make([]int, len(labels))
	fold := make([]bool, len(labels))
	for i, l := range labels {
		byName[i] = i
		fold[i] = open == nil || slices.Contains(open, l)
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return labelSet{name: name, help: help, labels: labels, byName: byName, fold: fold, newHist: newHist, series: map[string]*series{}}
}

func (v *labelSet) metricName() string { return v.name }

// with returns the series of values (one per label, in the order of the
// labels), creating it if needed. A hit takes a read lock and, for short
// values, does not allocate.
func (v *labelSet) with(values []string) *series {
	if len(values) != len(v.labels) {
		panic("web: metric " + v.name + " takes " + strconv.Itoa(len(v.labels)) + " label values, got " + strconv.Itoa(len(values)))
	}
	var buf [128]byte
	key := appendKey(buf[:0], values)
	v.mu.RLock()
	l := v.series[string(key)]
	v.mu.RUnlock()
	if l != nil {
		return l
	}
	return v.add(values, key)
}

// add creates the series of values under the write lock. Past maxSeries the
// foldable labels' values are replaced by otherLabel; that series is made
// even past the cap, which holds because the other labels' values are few
// and chosen by this package.
func (v *labelSet) add(values []string, key []byte) *series {
	v.mu.Lock()
	defer v.mu.Unlock()
	if l := v.series[string(key)]; l != nil {
		return l
	}
	// A copy of its own: the caller's slice must not escape, or every
	// call would allocate it.
	own := make([]string, len(values))
	copy(own, values)
	if len(v.series) >= maxSeries {
		for i := range own {
			if v.fold[i] {
				own[i] = otherLabel
			}
		}
		key = appendKey(key[:0], own)
		if l := v.series[string(key)]; l != nil {
			return l
		}
	}
	l := &series{values: own}
	if v.newHist != nil {
		l.hist = v.newHist()
	}
	v.series[string(key)] = l
	return l
}

// appendKey joins label values with a byte that valid UTF-8 never holds;
// values that are not valid UTF-8 are written with replacement characters
// anyway, and a collision then only merges two such series.
func appendKey(b []byte, values []string) []byte {
	for i, s := range values {
		if i > 0 {
			b = append(b, 0xff)
		}
		b = append(b, s...)
	}
	return b
}

// sorted returns the series ordered by their label values in label-name
// order, as client_golang writes them.
func (v *labelSet) sorted() []*series {
	v.mu.RLock()
	out := make([]*series, 0, len(v.series))
	for _, l := range v.series {
		out = append(out, l)
	}
	v.mu.RUnlock()
	slices.SortFunc(out, func(a, b *series) int {
		for _, i := range v.byName {
			if c := strings.Compare(a.values[i], b.values[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return out
}

// appendLabels writes {name="value",...} in label-name order, with extra
// (the histogram's le) last; nothing when there are no labels at all.
func (v *labelSet) appendLabels(b []byte, values []string, extraName, extraValue string) []byte {
	if len(values) == 0 && extraName == "" {
		return b
	}
	b = append(b, '{')
	for n, i := range v.byName {
		if n > 0 {
			b = append(b, ',')
		}
		b = appendLabel(b, v.labels[i], values[i])
	}
	if extraName != "" {
		if len(values) > 0 {
			b = append(b, ',')
		}
		b = appendLabel(b, extraName, extraValue)
	}
	return append(b, '}')
}

// counterVec is a counter with labels.
type counterVec struct{ labelSet }

// counter is the value of one series of a counterVec.
type counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *counter) Inc() { c.n.Add(1) }

func newCounterVec(name, help string, labels, open []string) *counterVec {
	return &counterVec{newLabelSet(name, help, labels, open, nil)}
}

// WithLabelValues returns the series of values, given in the order of the
// vector's labels.
func (v *counterVec) WithLabelValues(values ...string) *counter { return &v.with(values).counter }

func (v *counterVec) appendText(b []byte) []byte {
	series := v.sorted()
	if len(series) == 0 {
		return b
	}
	b = appendHeader(b, v.name, v.help, "counter")
	for _, l := range series {
		b = append(b, v.name...)
		b = v.appendLabels(b, l.values, "", "")
		b = append(b, ' ')
		b = appendFloat(b, float64(l.n.Load()))
		b = append(b, '\n')
	}
	return b
}

// histogramVec is a histogram with labels.
type histogramVec struct {
	labelSet
	bounds []float64
}

// histogram is one series of a histogramVec. Buckets hold the count of
// their own range only and are summed when written, so an observation is
// two atomic adds and a compare-and-swap; the count is the sum of the
// buckets, so it always equals the +Inf bucket.
type histogram struct {
	bounds  []float64
	buckets []atomic.Uint64 // len(bounds)+1: the last is above every bound
	sumBits atomic.Uint64   // math.Float64bits of the sum
}

// Observe records one value.
func (h *histogram) Observe(v float64) {
	// The first bound ≥ v (le is inclusive); NaN, like +Inf, lands above
	// every bound, as in client_golang. The bounds are few: a scan is
	// quicker than a binary search.
	i := 0
	for i < len(h.bounds) && !(h.bounds[i] >= v) {
		i++
	}
	h.buckets[i].Add(1)
	for {
		old := h.sumBits.Load()
		if h.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func newHistogramVec(name, help string, bounds []float64, labels, open []string) *histogramVec {
	return &histogramVec{
		labelSet: newLabelSet(name, help, labels, open, func() *histogram {
			return &histogram{bounds: bounds, buckets: make([]atomic.Uint64, len(bounds)+1)}
		}),
		bounds: bounds,
	}
}

// WithLabelValues returns the series of values, given in the order of the
// vector's labels.
func (v *histogramVec) WithLabelValues(values ...string) *histogram { return v.with(values).hist }

func (v *histogramVec) appendText(b []byte) []byte {
	series := v.sorted()
	if len(series) == 0 {
		return b
	}
	b = appendHeader(b, v.name, v.help, "histogram")
	var le []byte
	for _, l := range series {
		var cum uint64
		for i := range l.hist.buckets {
			cum += l.hist.buckets[i].Load()
			le = le[:0]
			if i < len(v.bounds) {
				le = appendFloat(le, v.bounds[i])
			} else {
				le = append(le, "+Inf"...)
			}
			b = append(b, v.name...)
			b = append(b, "_bucket"...)
			b = v.appendLabels(b, l.values, "le", string(le))
			b = append(b, ' ')
			b = appendFloat(b, float64(cum))
			b = append(b, '\n')
		}
		b = append(b, v.name...)
		b = append(b, "_sum"...)
		b = v.appendLabels(b, l.values, "", "")
		b = append(b, ' ')
		b = appendFloat(b, math.Float64frombits(l.hist.sumBits.Load()))
		b = append(b, '\n')
		b = append(b, v.name...)
		b = append(b, "_count"...)
		b = v.appendLabels(b, l.values, "", "")
		b = append(b, ' ')
		b = appendFloat(b, float64(cum))
		b = append(b, '\n')
	}
	return b
}

// gauge is a value without labels that goes up and down.
type gauge struct {
	name, help string
	n          atomic.Int64
}

// Inc adds one.
func (g *gauge) Inc() { g.n.Add(1) }

// Dec takes one away.
func (g *gauge) Dec() { g.n.Add(-1) }

func (g *gauge) metricName() string { return g.name }

func (g *gauge) appendText(b []byte) []byte {
	return appendSample(appendHeader(b, g.name, g.help, "gauge"), g.name, float64(g.n.Load()))
}

// appendHeader writes a metric's HELP and TYPE lines.
func appendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

// appendSample writes one sample without labels.
func appendSample(b []byte, name string, v float64) []byte {
	b = append(b, name...)
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendLabel writes name="value" with the value escaped.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendEscaped(b, value, true)
	return append(b, '"')
}

// appendEscaped escapes s as the text format requires: backslash and
// line feed everywhere, the double quote in label values. Bytes that are
// not UTF-8 become U+FFFD, since the format is UTF-8 and a scraper would
// otherwise reject the whole page.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i, r := range s {
		switch {
		case r == '\\':
			b = append(b, `\\`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '"' && quote:
			b = append(b, `\"`...)
		case r == utf8.RuneError:
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				b = append(b, "\uFFFD"...)
			} else {
				b = append(b, s[i:i+size]...)
			}
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return b
}

// appendFloat writes a sample value as client_golang does: the shortest
// representation, and +Inf, -Inf and NaN by name.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 1:
		return append(b, '1')
	case v == 0:
		return append(b, '0')
	case v == -1:
		return append(b, "-1"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
