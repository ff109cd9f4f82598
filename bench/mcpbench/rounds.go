package mcpbench

import (
	"fmt"
	"math"
	"slices"
)

// Series is one figure measured once per round.
type Series []float64

// Median is the median of the rounds (the mean of the two middle ones for
// an even count), 0 for none.
func (s Series) Median() float64 {
	if len(s) == 0 {
		return 0
	}
	c := slices.Clone(s)
	slices.Sort(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

// Spread is the smallest and the largest round.
func (s Series) Spread() (lo, hi float64) {
	if len(s) == 0 {
		return 0, 0
	}
	return slices.Min(s), slices.Max(s)
}

// Ratios divides a by b round by round; a round where either is missing
// or b is not positive gives NaN, which never meets a target.
func Ratios(a, b Series) Series {
	n := max(len(a), len(b))
	r := make(Series, n)
	for i := range r {
		r[i] = math.NaN()
		if i < len(a) && i < len(b) && b[i] > 0 && a[i] >= 0 {
			r[i] = a[i] / b[i]
		}
	}
	return r
}

// Needed is how many of n rounds a target must hold in: all but one, so
// that one disturbed round neither makes nor breaks it (all of them when
// there are fewer than three rounds, where one is a third or more).
func Needed(n int) int {
	if n < 3 {
		return n
	}
	return n - 1
}

// Goal is a limit a figure must stay under (AtMost) or reach (AtLeast).
type Goal struct {
	Limit   float64
	AtLeast bool
}

// Holds says whether v meets the goal; NaN never does.
func (g Goal) Holds(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if g.AtLeast {
		return v >= g.Limit
	}
	return v <= g.Limit
}

func (g Goal) String() string {
	if g.AtLeast {
		return "≥ " + FormatNum(g.Limit)
	}
	return "≤ " + FormatNum(g.Limit)
}

// Verdict is a goal checked against one figure's rounds: met only when it
// holds in the median and in Needed(len(Rounds)) rounds. (With all but one
// round holding, the median holds too; the median is checked anyway so
// that the rule stays what the report states if Needed changes.)
type Verdict struct {
	Goal   Goal
	Rounds Series
	Median float64
	Held   int
	Met    bool
}

// Check evaluates g over the rounds of s.
func Check(g Goal, s Series) Verdict {
	v := Verdict{Goal: g, Rounds: s, Median: s.Median()}
	for _, x := range s {
		if g.Holds(x) {
			v.Held++
		}
	}
	v.Met = len(s) > 0 && g.Holds(v.Median) && v.Held >= Needed(len(s))
	return v
}

// Status is the verdict for the report's "met" column.
func (v Verdict) Status() string {
	n := len(v.Rounds)
	switch {
	case n == 0:
		return "not measured"
	case v.Met:
		return fmt.Sprintf("yes (%d of %d rounds)", v.Held, n)
	case !v.Goal.Holds(v.Median):
		return fmt.Sprintf("**no**: median misses, holds in %d of %d rounds", v.Held, n)
	default:
		return fmt.Sprintf("**no**: median holds, but only %d of %d rounds (needs %d)", v.Held, n, Needed(n))
	}
}
