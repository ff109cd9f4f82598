package mcpbench

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 < p ≤ 100) of ds by the
// nearest-rank method: the smallest sample that at least p% of the samples
// are less than or equal to. ds need not be sorted and is left unchanged.
// It returns 0 for no samples.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return percentileSorted(s, p)
}

func percentileSorted(s []time.Duration, p float64) time.Duration {
	if p <= 0 {
		return s[0]
	}
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Median returns the median of ds: the mean of the two middle samples when
// there is an even number of them. It returns 0 for no samples.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// ms converts d to fractional milliseconds for the JSON output.
func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

// us converts d to fractional microseconds for the JSON output.
func us(d time.Duration) float64 { return round3(float64(d) / float64(time.Microsecond)) }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }
