package mcpserver

import (
	"io"
	"os"
)

// ReopenPollable is reopenPollable, for the differential test of stdin on
// a socket.
func ReopenPollable(f *os.File) (io.ReadCloser, error) { return reopenPollable(f) }

// NewRawReader and NewStdoutWriter are newRawReader and newStdoutWriter,
// for the differential test of the raw system calls.
func NewRawReader(r io.ReadCloser) io.ReadCloser { return newRawReader(r) }
func NewStdoutWriter(f *os.File) io.Writer       { return newStdoutWriter(f) }
