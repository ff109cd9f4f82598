package mcpserver

import (
	"io"
	"os"
	"time"
)

// ReopenPollable is reopenPollable, for the differential test of stdin on
// a socket.
func ReopenPollable(f *os.File) (io.ReadCloser, error) { return reopenPollable(f) }

// NewRawReader and NewStdoutWriter are newRawReader and newStdoutWriter,
// for the differential test of the raw system calls.
func NewRawReader(r io.ReadCloser) io.ReadCloser { return newRawReader(r) }
func NewStdoutWriter(f *os.File) io.Writer       { return newStdoutWriter(f) }

// SetRawReaderSpin sets how long r (from NewRawReader) polls before it
// parks, and RawReaderParks says how many of its reads parked.
func SetRawReaderSpin(r io.ReadCloser, d time.Duration) { r.(*rawReader).spin = d }
func RawReaderParks(r io.ReadCloser) int {
	rr := r.(*rawReader)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.parks
}
