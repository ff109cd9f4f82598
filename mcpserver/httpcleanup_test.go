package mcpserver_test

import (
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
)

// newHTTPHandler is mcpserver.NewHTTPHandler for a test: the handler's MCP
// sessions are closed when the test ends (after an httptest server closed
// earlier in the cleanup order), as RunHTTP closes them after its server
// stops, so none outlives its test and TestMain's leak check holds.
func newHTTPHandler(tb testing.TB, srv *mcpserver.Server, opts *mcpserver.HTTPOptions) *mcpserver.HTTPHandler {
	h := mcpserver.NewHTTPHandler(srv, opts)
	tb.Cleanup(h.CloseSessions)
	return h
}
