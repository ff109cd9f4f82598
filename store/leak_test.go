package store_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// database handle left open keeps its connection goroutines.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
