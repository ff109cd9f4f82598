package main

import (
	"runtime/debug"
	"testing"
)

func TestTuneServeGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	if !tuneServeGC(func(string) string { return "" }) {
		t.Fatal("GOGC unset: tuneServeGC did nothing")
	}
	if got := debug.SetGCPercent(100); got != serveGCPercent {
		t.Fatalf("GOGC unset: GC percent is %d, want %d", got, serveGCPercent)
	}
	if tuneServeGC(func(k string) string { return map[string]string{"GOGC": "200"}[k] }) {
		t.Fatal("GOGC=200: tuneServeGC overrode the user's setting")
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=200: GC percent changed to %d", got)
	}
}
