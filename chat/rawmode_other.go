//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package chat

import "errors"

// termState is empty where the editor has no raw mode: the REPL reads
// plain lines there.
type termState struct{}

var errNoRawMode = errors.New("line editing is not supported on this system")

func getState(int) (*termState, error) { return nil, errNoRawMode }
func setState(int, *termState) error   { return errNoRawMode }
func makeRaw(int) (*termState, error)  { return nil, errNoRawMode }
func stopSelf() error                  { return errNoRawMode }
