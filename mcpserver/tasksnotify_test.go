package mcpserver_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
)

// decidedTasks is a TaskBackend of one task that waits until decide, and
// a TaskWaiter told of the decision, as the support backend is by the
// database when an operator decides in another process.
type decidedTasks struct {
	mu      sync.Mutex
	status  string
	changed chan struct{} // closed at the decision
}

func (b *decidedTasks) TaskTools() []string { return []string{"hold"} }
func (b *decidedTasks) task() *mcpserver.Task {
	return &mcpserver.Task{ID: "task-1", Status: b.status, StatusMessage: "waiting for an operator",
		Created: time.Unix(0, 0), Updated: time.Unix(0, 0), TTL: time.Hour, PollInterval: 5 * time.Second, Output: "approved"}
}
func (b *decidedTasks) StartTask(context.Context, string, string, json.RawMessage, time.Duration) (*mcpserver.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = "working"
	return b.task(), nil
}
func (b *decidedTasks) Task(context.Context, string, string) (*mcpserver.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.task(), nil
}
func (b *decidedTasks) Tasks(ctx context.Context, caller string) ([]*mcpserver.Task, error) {
	t, _ := b.Task(ctx, caller, "task-1")
	return []*mcpserver.Task{t}, nil
}
func (b *decidedTasks) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrTaskEnded
}
func (b *decidedTasks) WaitChange(ctx context.Context, d time.Duration) {
	select {
	case <-b.changed:
	case <-ctx.Done():
	case <-time.After(d):
	}
}
func (b *decidedTasks) decide() {
	b.mu.Lock()
	b.status = "completed"
	b.mu.Unlock()
	close(b.changed)
}

// A stdio session that created a task is sent notifications/tasks/status
// when the backend tells of the decision, without asking: well before
// the task's 5 s poll interval.
func TestTaskStatusNotificationOnStdio(t *testing.T) {
	b := &decidedTasks{changed: make(chan struct{})}
	hold := &agent.Tool{Name: "hold", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "plain", nil }}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tools: []*agent.Tool{hold}, Tasks: b})
	r := newRawSessionOn(t, srv, rawTransports[2].make) // serve's stdio transport
	r.handshake()
	r.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hold","arguments":{},"task":{"ttl":60000}}}`)
	var created struct {
		Result struct {
			Task struct{ TaskID, Status string }
		}
	}
	if err := json.Unmarshal(r.receive(), &created); err != nil || created.Result.Task.Status != "working" {
		t.Fatalf("created: %+v, %v", created, err)
	}
	lines := make(chan []byte, 1)
	go func() {
		line, _ := r.out.ReadBytes('\n') // not receive: it may end after the test
		lines <- line
	}()
	start := time.Now()
	b.decide()
	select {
	case line := <-lines:
		var note struct {
			Method string
			Params struct{ TaskID, Status string }
		}
		if err := json.Unmarshal(line, &note); err != nil || note.Method != "notifications/tasks/status" ||
			note.Params.TaskID != "task-1" || note.Params.Status != "completed" {
			t.Fatalf("after the decision the session got %s (%v)", line, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("the notification came %v after the decision", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5 s of the decision")
	}
}
