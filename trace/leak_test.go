package trace_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// recorder must not keep anything running after its run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
