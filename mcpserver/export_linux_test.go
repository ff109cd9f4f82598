package mcpserver

import (
	"io"
	"os"
)

// ReopenPollable is reopenPollable, for the differential test of stdin on
// a socket.
func ReopenPollable(f *os.File) (io.ReadCloser, error) { return reopenPollable(f) }
