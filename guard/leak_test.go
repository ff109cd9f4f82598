package guard

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: the
// guarded tools and the audit log must not leave workers behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
