package resultstore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when one of them leaves a goroutine
// running (an exporter or processor not shut down, a reader left waiting).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
