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
// about 1.7× the CPU it costs at the default (tuneServe).
const serveGCPercent = 50

// serveHTTPGCPercent is the collector's target for `serve --http` when the
// user has not set GOGC. With collections coming with the calls (above),
// fewer of them is CPU the clients get back: at 200 a call through the
// TypeScript SDK client cost 0.67× the server CPU of the default's, and
// since that client and the server share the machine's cores, its p50
// fell to 0.82× (16 sessions, 6 interleaved rounds). The price is memory:
// the minimum heap goal doubles to 8 MiB, and 256 open sessions held about
// 3 MiB more. bench/NOTES.md has the A/B.
const serveHTTPGCPercent = 200

// tuneServe tunes the runtime for `agentapp serve`: the collector and one
// processor on stdio (tuneServeGC, tuneServeProcs); HTTP keeps every
// processor and collects less often (serveHTTPGCPercent).
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
