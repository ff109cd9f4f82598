//go:build !unix

package testkit

import "testing"

// StartHTTPPeer needs process groups to leave nothing behind; elsewhere
// the tests that use it skip.
func StartHTTPPeer(t testing.TB, ready string, command string, args ...string) string {
	t.Helper()
	t.Skip("StartHTTPPeer runs servers in a process group of their own, which needs a Unix")
	return ""
}
