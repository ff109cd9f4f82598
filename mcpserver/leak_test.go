package mcpserver

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// session, a warm worker or an HTTP stream left running is a server that
// does not shut down cleanly.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
