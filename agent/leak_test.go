package agent_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// tool call the loop abandoned must still end once its tool returns.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
