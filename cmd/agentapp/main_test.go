package main

import (
	"os"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
)

// The binaries that the subprocess tests run. Each is built on first use,
// once per test run, and shared: linking agentapp takes a second or two,
// and several tests run it. They are built lazily rather than up front in
// TestMain so that a run of tests that need neither (go test -run
// TestChatUsageErrors) builds nothing; TestMain only removes them.
var (
	agentappBinary = &testkit.Binary{Pkg: "github.com/agentapp/agentapp/cmd/agentapp"}
	// mcpclient's misbehaving-on-demand test server.
	mcpTestServer = &testkit.Binary{Pkg: "github.com/agentapp/agentapp/mcpclient/internal/testserver"}
)

func TestMain(m *testing.M) {
	code := m.Run()
	agentappBinary.Remove()
	mcpTestServer.Remove()
	os.Exit(code)
}

// agentappBin returns the path of the agentapp binary built from this
// package.
func agentappBin(t *testing.T) string {
	t.Helper()
	return agentappBinary.Path(t)
}

// mcpTestServerBin returns the path of mcpclient's test server.
func mcpTestServerBin(t *testing.T) string {
	t.Helper()
	return mcpTestServer.Path(t)
}
