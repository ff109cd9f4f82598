package testkit

import "log/slog"

// NewLogger returns a logger that writes its records, in slog's text
// format, into the SyncBuffer it also returns: code under test logs from
// its own goroutines, and the test reads or waits for the lines there.
func NewLogger() (*slog.Logger, *SyncBuffer) {
	buf := &SyncBuffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}
