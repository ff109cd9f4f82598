package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"go.uber.org/goleak"
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
	appViewServer.Remove()
	// The in-process commands (chat, web) must leave no goroutine behind:
	// a server, a turn or a connect that outlives its command is a leak.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
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

// TestStartsServers: the commands that can start stdio MCP servers (and so
// adopt their orphans) are chat and the mcp client commands, wherever the
// global flags stand; serve and kb are not.
func TestStartsServers(t *testing.T) {
	root := newRootCmd()
	for args, want := range map[string]bool{
		"chat":                         true,
		"--data-dir /tmp/x chat -p hi": true,
		"mcp tools -- agentapp serve":  true,
		"mcp call getOrderStatus {}":   true,
		"web --http 127.0.0.1:0":       true,
		"serve":                        false,
		"serve --http 127.0.0.1:0":     false,
		"kb list":                      false,
		"":                             false,
		"no-such-command":              false,
	} {
		if got := startsServers(root, strings.Fields(args)); got != want {
			t.Errorf("startsServers(%q) = %v, want %v", args, got, want)
		}
	}
}
