package support_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: an
// open database handle, an order-cache watch or a writer process's pipe
// reader left behind is a leak of the Service.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
