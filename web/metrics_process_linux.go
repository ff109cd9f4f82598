package web

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// userHZ is the unit of the CPU times in /proc: USER_HZ, 100 on every
// Linux architecture Go supports (as procfs, which client_golang uses,
// assumes too).
const userHZ = 100

// appendProcessMetrics writes the essentials of client_golang's process
// collector, from /proc/self and the resource limits. A value that cannot
// be read is left out rather than failing the scrape.
func appendProcessMetrics(b []byte, start func() (float64, bool)) []byte {
	f, stat := procSelfStat()
	if stat {
		if utime, err1 := strconv.ParseUint(f[statUtime], 10, 64); err1 == nil {
			if stime, err2 := strconv.ParseUint(f[statStime], 10, 64); err2 == nil {
				b = appendHeader(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter")
				b = appendSample(b, "process_cpu_seconds_total", float64(utime+stime)/userHZ)
			}
		}
	}
	if n, err := openFDs(); err == nil {
		b = appendHeader(b, "process_open_fds", "Number of open file descriptors.", "gauge")
		b = appendSample(b, "process_open_fds", float64(n))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		b = appendHeader(b, "process_max_fds", "Maximum number of open file descriptors.", "gauge")
		b = appendSample(b, "process_max_fds", float64(lim.Cur))
	}
	if stat {
		if v, err := strconv.ParseUint(f[statVsize], 10, 64); err == nil {
			b = appendHeader(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge")
			b = appendSample(b, "process_virtual_memory_bytes", float64(v))
		}
		if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil {
			b = appendHeader(b, "process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge")
			b = appendSample(b, "process_virtual_memory_max_bytes", float64(lim.Cur))
		}
		if v, err := strconv.ParseUint(f[statRSS], 10, 64); err == nil {
			b = appendHeader(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge")
			b = appendSample(b, "process_resident_memory_bytes", float64(v)*float64(os.Getpagesize()))
		}
	}
	if t, ok := start(); ok {
		b = appendHeader(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge")
		b = appendSample(b, "process_start_time_seconds", t)
	}
	return b
}

// The fields of /proc/self/stat used here, counted from the state field
// (the third in proc(5)), which is the first after the command name.
const (
	statUtime     = 14 - 3
	statStime     = 15 - 3
	statStartTime = 22 - 3
	statVsize     = 23 - 3
	statRSS       = 24 - 3
)

// procSelfStat returns the fields of /proc/self/stat after the command
// name, which is skipped by its last parenthesis since it may hold spaces
// and parentheses itself.
func procSelfStat() ([]string, bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return nil, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) <= statRSS {
		return nil, false
	}
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = string(x)
	}
	return out, true
}

// openFDs counts the entries of /proc/self/fd, less the one reading it.
func openFDs() (int, error) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names) - 1, err
}

// processStartTime is when the process started, in seconds since the
// epoch: the boot time from /proc/stat plus the start from /proc/self/stat.
// It never changes, so the Server computes it once.
func processStartTime() (float64, bool) {
	f, ok := procSelfStat()
	if !ok {
		return 0, false
	}
	ticks, err := strconv.ParseUint(f[statStartTime], 10, 64)
	if err != nil {
		return 0, false
	}
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range bytes.Lines(data) {
		if v, found := bytes.CutPrefix(line, []byte("btime ")); found {
			boot, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, false
			}
			return float64(boot) + float64(ticks)/userHZ, true
		}
	}
	return 0, false
}
