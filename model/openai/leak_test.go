package openai

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: a
// streamed response whose body is not closed leaves the HTTP client's
// connection goroutines running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
