//go:build !linux

package web

// appendProcessMetrics writes nothing: the process series are read from
// /proc, which only Linux has.
func appendProcessMetrics(b []byte, _ func() (float64, bool)) []byte { return b }

// processStartTime is unknown without /proc.
func processStartTime() (float64, bool) { return 0, false }
