//go:build !linux

package mcpserver

import (
	"io"
	"os"
)

// pollableStdin returns os.Stdin: reopening a pipe in non-blocking mode
// (see the Linux version) relies on /proc.
func pollableStdin() io.ReadCloser { return os.Stdin }
