package agentmcp

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// leaked reader of a server's pipes or a session that never closed is a
// bug the bridge's Close promises not to have.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
