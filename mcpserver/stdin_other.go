//go:build !linux

package mcpserver

import (
	"io"
	"os"
)

// pollableStdin returns os.Stdin: reopening a pipe in non-blocking mode
// (see the Linux version) relies on /proc.
func pollableStdin() io.ReadCloser { return os.Stdin }

// newRawReader returns r: raw reads are for Linux (rawio_linux.go).
func newRawReader(r io.ReadCloser) io.ReadCloser { return r }

// newStdoutWriter returns f: raw sends are for Linux (rawio_linux.go).
func newStdoutWriter(f *os.File) io.Writer { return f }
