package web

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: a turn, a
// stream or an approval that outlives its request is a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
