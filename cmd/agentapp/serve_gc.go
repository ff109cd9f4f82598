package main

import (
	"runtime"
	"runtime/debug"
)

// serveGCPercent is the garbage collector's target for `agentapp serve`
// when the user has not set GOGC.
//
// A server's live heap is tiny (well under 1 MiB between calls: the data
// lives in SQLite), so its footprint is set by the runtime's minimum heap
// goal, 4 MiB at the default GOGC=100, which scales with GOGC. At 50 the
// floor is 2 MiB: about 2 MiB less resident memory under load, for one more
// collection of a near-empty heap per ~500 calls (a few µs of CPU each).
// Several MCP servers often sit idle in a desktop client for hours, so
// the memory matters more than the CPU. bench/NOTES.md has the A/B.
//
// Only stdio: over HTTP the SDK's handler allocates about 200 KB per call
// (a 32 KiB JSON decoder buffer for each of its several decodes of a
// request), so collections come with the calls, and at 50 a call cost
// about 1.7× the CPU it costs at the default (see serveHTTPGCPercent).
const serveGCPercent = 50

// serveHTTPGCPercent is the collector's target for `agentapp serve --http`
// when the user has not set GOGC.
//
// Under load the HTTP server's live heap is a few MiB (the sessions and
// the requests in flight) while the SDK's handler allocates about 200 KB
// per call, so at the default of 100 it collected every 10–15 ms at 256
// sessions and spent about a fifth of its CPU on it, each cycle stopping
// the world and charging assists to the requests that allocated during
// it. At 400 a collection comes about four times less often: CPU per call
// fell by about a third and p99 with it, for a heap goal of five times a
// live heap of a few MiB (bench/NOTES.md has the A/B).
const serveHTTPGCPercent = 400

// tuneServe tunes the runtime for `agentapp serve`: the collector and one
// processor on stdio (tuneServeGC, tuneServeProcs); over HTTP a less
// frequent collector (serveHTTPGCPercent) and every processor.
func tuneServe(getenv func(string) string, http bool) {
	if http {
		tuneServeGC(getenv, serveHTTPGCPercent)
		return
	}
	tuneServeGC(getenv, serveGCPercent)
	tuneServeProcs(getenv)
}

// tuneServeGC sets the collector's target to percent unless GOGC is set,
// which the user chose and the runtime has already applied. It reports
// whether it did.
func tuneServeGC(getenv func(string) string, percent int) bool {
	if getenv("GOGC") != "" {
		return false
	}
	debug.SetGCPercent(percent)
	return true
}

// tuneServeProcs runs a stdio server on one processor unless GOMAXPROCS is
// set, which the user chose and the runtime has already applied. It
// reports whether it did.
//
// A stdio server has one client, and its calls are short reads of SQLite:
// with a second processor, every request handed from the reader to a
// worker woke another OS thread, which spun looking for work and slept
// again, so a sequential call cost about twice the CPU and latency of the
// same call on one processor, for no gain in calls per second (the
// client needs the other core). The HTTP server keeps every processor: it
// serves many clients at once. bench/NOTES.md has the A/B.
func tuneServeProcs(getenv func(string) string) bool {
	if getenv("GOMAXPROCS") != "" {
		return false
	}
	runtime.GOMAXPROCS(1)
	return true
}
