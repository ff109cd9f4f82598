package web

import (
	"runtime"
	"runtime/debug"
	rm "runtime/metrics"
	"time"
)

// goMetric is one go_* series taken from runtime/metrics: the sum of the
// named runtime samples, under the name and help client_golang's Go
// collector gives it, so dashboards made for that collector keep working.
type goMetric struct {
	name, help, typ string
	from            []string
}

// goMetrics are the essentials of client_golang's Go collector. They come
// from runtime/metrics, which unlike runtime.ReadMemStats does not stop
// the world.
var goMetrics = [...]goMetric{
	{"go_goroutines", "Number of goroutines that currently exist.", "gauge", []string{"/sched/goroutines:goroutines"}},
	{"go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", "counter",
		[]string{"/gc/heap/allocs:bytes"}},
	{"go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", "counter",
		[]string{"/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes"}},
	{"go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		[]string{"/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", "gauge",
		[]string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes"}},
	{"go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", "gauge",
		[]string{"/gc/heap/objects:objects"}},
	{"go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", "gauge",
		[]string{"/memory/classes/heap/released:bytes"}},
	{"go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "gauge",
		[]string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/released:bytes", "/memory/classes/heap/free:bytes"}},
	{"go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", "counter",
		[]string{"/gc/heap/allocs:objects", "/gc/heap/tiny/allocs:objects"}},
	{"go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", "gauge",
		[]string{"/gc/heap/goal:bytes"}},
	{"go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", "gauge",
		[]string{"/memory/classes/heap/stacks:bytes"}},
	{"go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", "gauge",
		[]string{"/memory/classes/total:bytes"}},
	{"go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", "gauge",
		[]string{"/sched/gomaxprocs:threads"}},
	{"go_threads", "Number of OS threads in the runtime now. Sourced from /sched/threads/total:threads.", "gauge",
		[]string{"/sched/threads/total:threads"}},
}

// appendGoMetrics writes the Go runtime's series.
func appendGoMetrics(b []byte) []byte {
	var samples []rm.Sample
	for _, m := range goMetrics {
		for _, name := range m.from {
			samples = append(samples, rm.Sample{Name: name})
		}
	}
	rm.Read(samples)
	value := make(map[string]float64, len(samples))
	for _, s := range samples {
		switch s.Value.Kind() {
		case rm.KindUint64:
			value[s.Name] = float64(s.Value.Uint64())
		case rm.KindFloat64:
			value[s.Name] = s.Value.Float64()
		}
	}

	// go_gc_duration_seconds is client_golang's summary of the pauses:
	// quantiles 0, 0.25, 0.5, 0.75 and 1 of the recent ones.
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	const gcName = "go_gc_duration_seconds"
	b = appendHeader(b, gcName, "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary")
	for i, q := range [...]string{"0", "0.25", "0.5", "0.75", "1"} {
		b = append(b, gcName...)
		b = append(b, `{quantile="`...)
		b = append(b, q...)
		b = append(b, `"} `...)
		b = appendFloat(b, gc.PauseQuantiles[i].Seconds())
		b = append(b, '\n')
	}
	b = appendSample(b, gcName+"_sum", gc.PauseTotal.Seconds())
	b = appendSample(b, gcName+"_count", float64(gc.NumGC))

	b = appendHeader(b, "go_info", "Information about the Go environment.", "gauge")
	b = append(b, `go_info{version="`...)
	b = appendEscaped(b, runtime.Version(), true)
	b = append(b, "\"} 1\n"...)
	b = appendHeader(b, "go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "gauge")
	b = appendSample(b, "go_memstats_last_gc_time_seconds", float64(gc.LastGC.UnixNano())/1e9)

	for _, m := range goMetrics {
		sum, ok := 0.0, true
		for _, name := range m.from {
			v, found := value[name]
			ok = ok && found
			sum += v
		}
		if !ok {
			continue // a runtime without this metric
		}
		b = appendSample(appendHeader(b, m.name, m.help, m.typ), m.name, sum)
	}
	return b
}
