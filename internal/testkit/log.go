package testkit

import (
	"log/slog"
	"testing"
)

// NewLogger returns a logger that writes its records, in slog's text
// format, into the SyncBuffer it also returns: code under test logs from
// its own goroutines, and the test reads or waits for the lines there.
func NewLogger() (*slog.Logger, *SyncBuffer) {
	buf := &SyncBuffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

// RecordDefaultLogger points the process-wide default logger, at every
// level, into the SyncBuffer it returns until the test ends, so that a test
// can check that code given its own logger (or none) logs nothing there.
// It changes global state: tests that use it must not run in parallel.
func RecordDefaultLogger(t testing.TB) *SyncBuffer {
	t.Helper()
	buf := &SyncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}
