package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestTuneServeGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	if !tuneServeGC(func(string) string { return "" }, serveGCPercent) {
		t.Fatal("GOGC unset: tuneServeGC did nothing")
	}
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("GOGC unset: GC percent is %d, want %d", got, serveGCPercent)
	}
	if tuneServeGC(func(k string) string { return map[string]string{"GOGC": "200"}[k] }, serveGCPercent) {
		t.Fatal("GOGC=200: tuneServeGC overrode the user's setting")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=200: GC percent changed to %d", got)
	}
}

func TestTuneServeProcs(t *testing.T) {
	old := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(old)

	runtime.GOMAXPROCS(2)
	if !tuneServeProcs(func(string) string { return "" }) {
		t.Fatal("GOMAXPROCS unset: tuneServeProcs did nothing")
	}
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS unset: %d processors, want 1", got)
	}
	runtime.GOMAXPROCS(2)
	if tuneServeProcs(func(k string) string { return map[string]string{"GOMAXPROCS": "2"}[k] }) {
		t.Fatal("GOMAXPROCS=2: tuneServeProcs overrode the user's setting")
	}
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Fatalf("GOMAXPROCS=2: %d processors, want 2", got)
	}
}

// TestTuneServeHTTP: the HTTP server keeps the scheduler's default (every
// processor) and collects at serveHTTPGCPercent unless GOGC is set; stdio
// gets its own two tunings.
func TestTuneServeHTTP(t *testing.T) {
	oldGC := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldGC)
	oldProcs := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(oldProcs)

	unset := func(string) string { return "" }
	tuneServe(unset, true)
	if got := debug.SetGCPercent(100); got != serveHTTPGCPercent {
		t.Errorf("HTTP: GC percent %d, want %d", got, serveHTTPGCPercent)
	}
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("HTTP: %d processors, want all 2", got)
	}
	tuneServe(func(k string) string { return map[string]string{"GOGC": "80"}[k] }, true)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("HTTP with GOGC set: GC percent changed to %d", got)
	}
	tuneServe(unset, false)
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Errorf("stdio: GC percent %d, want %d", got, serveGCPercent)
	}
	if got := runtime.GOMAXPROCS(2); got != 1 {
		t.Errorf("stdio: %d processors, want 1", got)
	}
}
