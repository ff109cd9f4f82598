package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

// outage is a backend error that says the database is down, as the
// store's errors do (an Unavailable method).
type outage struct{}

func (outage) Error() string     { return "the database is unavailable, try again shortly" }
func (outage) Unavailable() bool { return true }

// failingTasks is a backend whose reads fail with err.
type failingTasks struct {
	pagedTasks
	err error
}

func (b failingTasks) Task(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, b.err
}

// TestTaskBackendErrorsHaveCodes (issue 43, item 10): tasks/get over a
// backend that fails answers a JSON-RPC error with a code: -32000 and the
// outage's message when the database is down, -32603 otherwise; never
// code 0.
func TestTaskBackendErrorsHaveCodes(t *testing.T) {
	for _, c := range []struct {
		err       error
		code, msg string
	}{
		{fmtWrap(outage{}), `"code":-32000`, `"message":"the database is unavailable, try again shortly"`},
		{errors.New("disk I/O error"), `"code":-32603`, "disk I/O error"},
	} {
		r, _ := directSession(t, &mcpserver.Options{Version: "test", Tasks: failingTasks{err: c.err}}, true)
		r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		r.receive()
		r.send(mcpserver.InitializedLine)
		r.send(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"RF-1"}}`)
		line := receiveWithin(t, r, 10*time.Second, "tasks/get")
		if !strings.Contains(line, c.code) || !strings.Contains(line, c.msg) {
			t.Errorf("tasks/get over %v: %s; want %s with %s", c.err, line, c.code, c.msg)
		}
	}
}

func fmtWrap(err error) error { return &wrapped{"read task RF-1: ", err} }

type wrapped struct {
	prefix string
	err    error
}

func (w *wrapped) Error() string { return w.prefix + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
