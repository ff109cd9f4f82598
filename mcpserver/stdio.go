package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// StdioTransport returns the transport `agentapp serve` speaks on
// stdin/stdout: an IOTransport with the server's direct path, on a stdin
// the runtime can poll when it is a pipe, read and written without waking
// the runtime's monitor thread where that is safe (rawio_linux.go). Close
// closes stdin, never stdout, which the process may still use to report
// how it ended.
func (s *Server) StdioTransport() *IOTransport {
	return s.NewIOTransport(newRawReader(pollableStdin()), nopWriteCloser{newStdoutWriter(os.Stdout)})
}

// ServeStdio serves one session on stdin/stdout until the client closes
// stdin (a normal end: nil) or ctx is cancelled (nil too: the caller asked
// for it).
func (s *Server) ServeStdio(ctx context.Context) error {
	ss, err := s.Connect(ctx, s.StdioTransport(), nil)
	if err != nil {
		return fmt.Errorf("cannot start the stdio transport: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		ss.Close()
		<-ended
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("the MCP session ended with an error: %w", err)
	}
	return nil
}

// nopWriteCloser is a writer whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
