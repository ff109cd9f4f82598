package testkit

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: the
// peers it starts (processes, HTTP servers) must end with their tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
