package mcpclient

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: a
// leaked reader of a server's pipes or a session that never closed is a
// bug the bridge's Close promises not to have. It also removes the test
// server binary built for the subprocess tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testServer.Remove()
		os.Exit(code)
	}))
}
