package mcpclient

import (
	"path/filepath"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
)

// testServer is mcpclient/internal/testserver, built on first use and
// once per test binary; TestMain removes it.
var testServer = &testkit.Binary{Pkg: "./internal/testserver"}

// testServerPath returns the path of the built test server.
func testServerPath(t testing.TB) string {
	t.Helper()
	return testServer.Path(t)
}

// wrapperPath is a shell script that runs its arguments as a child, like
// npx does, making the real server a grandchild of the bridge.
func wrapperPath(t testing.TB) string {
	t.Helper()
	p, err := filepath.Abs("testdata/client/wrapper.sh")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
