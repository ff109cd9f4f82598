package host

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves a goroutine behind: a close, a
// connect or a turn that outlives its call is a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
