package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the Server's own series, on a registry of its own: two
// Servers in one process (tests, an embedder) never share or clash.
type metrics struct {
	reg            *prometheus.Registry
	requests       *prometheus.CounterVec
	requestSeconds *prometheus.HistogramVec
	turns          *prometheus.CounterVec
	turnSeconds    *prometheus.HistogramVec
	firstEvent     *prometheus.HistogramVec
	toolCalls      *prometheus.CounterVec
	approvals      *prometheus.CounterVec
	openStreams    prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_requests_total", Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		requestSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_request_duration_seconds", Help: "Time to serve a request, streams included, by route pattern.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"route"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentapp_web_turns_total", Help: "Turns by API (chat, openai) and outcome (ok, error, cancelled, timeout).",
		}, []string{"api", "outcome"}),
		turnSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_turn_duration_seconds", Help: "Time of a whole turn, model and tool calls included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"api"}),
		firstEvent: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "agentapp_web_first_token_seconds", Help: "Time from a message to the first text of its answer.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
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
	m.reg.MustRegister(m.requests, m.requestSeconds, m.turns, m.turnSeconds, m.firstEvent, m.toolCalls, m.approvals, m.openStreams,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
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
