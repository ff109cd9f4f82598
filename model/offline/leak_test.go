package offline

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: its
// knowledge base and database must be closed by the tests that open them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
