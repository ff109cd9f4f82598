package mcpclient

import (
	"github.com/agentapp/agentapp/internal/textsafe"
)

// maxErrorText bounds the text of one server-provided error in a message.
const maxErrorText = 2000

// safeText returns err's text escaped by textsafe's rule and cut to
// maxErrorText characters. Errors of the SDK and of the transports quote
// what the server sent (a JSON-RPC error message, an HTTP body), and these
// messages end up on the user's terminal: a server must not be able to
// put an escape sequence or a forged line there.
func safeText(err error) string { return textsafe.Preview(err.Error(), maxErrorText) }

// escapedError is an error whose text came, at least in part, from a
// server: Error escapes it (safeText) and Unwrap keeps the original for
// errors.Is and errors.As.
type escapedError struct{ err error }

func (e *escapedError) Error() string { return safeText(e.err) }
func (e *escapedError) Unwrap() error { return e.err }

// escaped wraps err in an escapedError, unless it is nil or one of the
// package's own errors, whose messages are built from escaped parts and
// may span lines on purpose.
func escaped(err error) error {
	switch err.(type) {
	case nil:
		return nil
	case *escapedError, *ConnectError, *serverExitError, *serverDownError, *restartError, *listLimitError:
		return err
	}
	return &escapedError{err}
}
