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
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p
			continue
		}
		if !strings.HasPrefix(line, "Benchmark") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		b := GoBench{Pkg: pkg, Name: f[0], Procs: 1, N: n, Metrics: map[string]float64{}}
		if i := strings.LastIndexByte(f[0], '-'); i > 0 {
			if p, err := strconv.Atoi(f[0][i+1:]); err == nil {
				b.Name, b.Procs = f[0][:i], p
			}
		}
		ok := true
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			b.Metrics[f[i+1]] = v
		}
		if ok {
			res = append(res, b)
		}
	}
	return res
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
