package mcpbench

import (
	"fmt"
	"strings"
)

// metric is one row of the comparison table.
type metric struct {
	label string
	unit  string
	value func(*Result) float64
	// better is "lower" or "higher"; it orders the ratio so that a ratio
	// below 1 always means the first server is better.
	better string
}

var metrics = []metric{
	{"cold start (spawn → initialize answered), median of %d", "ms", func(r *Result) float64 { return r.ColdStartMS }, "lower"},
	{"tools/call latency p50 (%d sequential)", "µs", func(r *Result) float64 { return r.LatencyP50US }, "lower"},
	{"tools/call latency p99 (%d sequential)", "µs", func(r *Result) float64 { return r.LatencyP99US }, "lower"},
	{"throughput, %d in flight", "calls/s", func(r *Result) float64 { return r.ThroughputCPS }, "higher"},
	{"server CPU per tools/call (sequential)", "µs", func(r *Result) float64 { return r.CPUPerCallUS }, "lower"},
	{"server CPU per tools/call (pipelined)", "µs", func(r *Result) float64 { return r.CPUPerCallTputUS }, "lower"},
	{"resident memory after the run (VmRSS, process group)", "MiB", func(r *Result) float64 { return r.RSSMiB }, "lower"},
	{"peak resident memory (VmHWM, process group)", "MiB", func(r *Result) float64 { return r.PeakRSSMiB }, "lower"},
	{"… of it after the run, anonymous (RssAnon: heap, stacks)", "MiB", func(r *Result) float64 { return r.RSSAnonMiB }, "lower"},
	{"… of it after the run, mapped from files (RssFile: executable, libraries)", "MiB", func(r *Result) float64 { return r.RSSFileMiB }, "lower"},
	{"stdin EOF → exit, after the run", "ms", func(r *Result) float64 { return r.EOFExitMS }, "lower"},
	{"stdin EOF → exit, idle (median of the cold spawns)", "ms", func(r *Result) float64 { return r.EOFExitIdleMS }, "lower"},
}

// Table renders results as a Markdown table, one column per server. With
// exactly two servers a last column gives the first's figure divided by
// the second's.
func Table(results []*Result) string {
	var b strings.Builder
	b.WriteString("| metric |")
	for _, r := range results {
		fmt.Fprintf(&b, " %s |", r.Name)
	}
	two := len(results) == 2
	if two {
		fmt.Fprintf(&b, " %s ÷ %s |", results[0].Name, results[1].Name)
	}
	b.WriteString("\n|---|")
	for range results {
		b.WriteString("---:|")
	}
	if two {
		b.WriteString("---:|")
	}
	b.WriteString("\n")
	for _, m := range metrics {
		label := m.label
		if strings.Contains(label, "%d") && len(results) > 0 {
			n := results[0].Calls
			switch {
			case strings.HasPrefix(label, "cold"):
				n = len(results[0].ColdStartAllMS)
			case strings.HasPrefix(label, "throughput"):
				n = results[0].Inflight
			}
			label = fmt.Sprintf(label, n)
		}
		fmt.Fprintf(&b, "| %s (%s) |", label, m.unit)
		for _, r := range results {
			fmt.Fprintf(&b, " %s |", FormatNum(m.value(r)))
		}
		if two {
			fmt.Fprintf(&b, " %s |", FormatRatio(m.value(results[0]), m.value(results[1])))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FormatNum prints v with about three significant digits; -1 (did not
// happen) prints as "did not exit".
func FormatNum(v float64) string {
	switch {
	case v == -1:
		return "did not exit"
	case v >= 100 || v == 0:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// FormatRatio prints a/b.
func FormatRatio(a, b float64) string {
	if a < 0 || b <= 0 {
		return "–"
	}
	r := a / b
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	if r >= 0.1 {
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.3f×", r)
}
