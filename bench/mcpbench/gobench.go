package mcpbench

import (
	"strconv"
	"strings"
)

// GoBench is one result line of `go test -bench` output.
type GoBench struct {
	Pkg     string             `json:"pkg"`
	Name    string             `json:"name"` // without the -GOMAXPROCS suffix
	Procs   int                `json:"procs"`
	N       int64              `json:"n"`
	Metrics map[string]float64 `json:"metrics"` // unit → value: ns/op, B/op, allocs/op, MB/s, custom
}

// ParseGoBench extracts the benchmark lines of `go test -bench` output
// (several packages may be concatenated); other lines are ignored.
func ParseGoBench(out string) []GoBench {
	var res []GoBench
	pkg := ""
	pending := "" // a name whose figures a log line pushed to a later line
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.HasPrefix(f[0], "Benchmark") {
			if b, ok := parseBenchFields(pkg, f[0], f[1:]); ok {
				res = append(res, b)
				pending = ""
			} else {
				pending = f[0]
			}
			continue
		}
		if pending != "" {
			if b, ok := parseBenchFields(pkg, pending, f); ok {
				res = append(res, b)
				pending = ""
			}
		}
	}
	return res
}

// parseBenchFields parses "N value unit value unit…" for benchmark name.
func parseBenchFields(pkg, name string, f []string) (GoBench, bool) {
	if len(f) < 3 || len(f)%2 != 1 {
		return GoBench{}, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return GoBench{}, false
	}
	b := GoBench{Pkg: pkg, Name: name, Procs: 1, N: n, Metrics: map[string]float64{}}
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if p, err := strconv.Atoi(name[i+1:]); err == nil {
			b.Name, b.Procs = name[:i], p
		}
	}
	for i := 1; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return GoBench{}, false
		}
		b.Metrics[f[i+1]] = v
	}
	_, ok := b.Metrics["ns/op"]
	return b, ok
}

// Matching returns the benchmarks named name or name/sub…, in order.
func Matching(bs []GoBench, name string) []GoBench {
	var out []GoBench
	for _, b := range bs {
		if b.Name == name || strings.HasPrefix(b.Name, name+"/") {
			out = append(out, b)
		}
	}
	return out
}

// Find returns the first benchmark named name (as in the output, without
// the -N suffix), or nil.
func Find(bs []GoBench, name string) *GoBench {
	for i := range bs {
		if bs[i].Name == name {
			return &bs[i]
		}
	}
	return nil
}

// FormatNs prints a duration given in nanoseconds with a suitable unit.
func FormatNs(ns float64) string {
	switch {
	case ns >= 1e9:
		return strconv.FormatFloat(ns/1e9, 'f', 2, 64) + " s"
	case ns >= 1e6:
		return strconv.FormatFloat(ns/1e6, 'f', 2, 64) + " ms"
	case ns >= 1e3:
		return strconv.FormatFloat(ns/1e3, 'f', 1, 64) + " µs"
	default:
		return strconv.FormatFloat(ns, 'f', 0, 64) + " ns"
	}
}
