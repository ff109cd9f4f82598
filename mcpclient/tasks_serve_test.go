package mcpclient

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// serveRefunds runs agentapp's MCP server over HTTP in the test, with two
// client tokens, and returns its endpoint and the support service.
func serveRefunds(t *testing.T) (string, *support.Service) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc, err := support.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kb.Open(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	server := mcpserver.New(assistant.ServerOptions(svc, k, "test"))
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(server, &mcpserver.HTTPOptions{Token: "alice-token,bob-token"}))
	t.Cleanup(ts.Close)
	return ts.URL + mcpserver.HTTPPath, svc
}

func connectAs(t *testing.T, endpoint, token, tasks string, opts ...ConnectOption) *Bridge {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Connect(ctx, mcpconfig.Server{Name: "agentapp", URL: endpoint, Token: token, Tasks: tasks}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// requestRefund on agentapp serve runs as a task that waits for an
// operator; the client shows "waiting for an operator", another client
// can neither read nor cancel the task, and the operator's approval
// completes the call with the decision.
func TestTaskServeRefund(t *testing.T) {
	endpoint, svc := serveRefunds(t)
	log := newTaskProgressLog()
	alice := connectAs(t, endpoint, "alice-token", "", WithProgress(log.add))
	if got := alice.TaskSupport("requestRefund"); got != tasks.Optional {
		t.Fatalf("requestRefund's taskSupport = %q, want optional", got)
	}
	// 2026-07-28 (the tasks extension, the server decides) or a
	// 2025-11-25 session (the client asks for a task).
	if !alice.extTasksOn() && (!alice.serverTasks().ToolsCall || !alice.runsAsTask("requestRefund")) {
		t.Fatalf("the server does not offer tasks for tools/call: %+v", alice.serverTasks())
	}
	type answer struct {
		out string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := execWithin(t, context.Background(), adTool(t, alice, "requestRefund"), `{"orderId":"A-1024","reason":"arrived broken"}`)
		done <- answer{out, err}
	}()
	var first Progress
	select {
	case first = <-log.seen:
	case a := <-done:
		t.Fatalf("the call ended before any status report: %q, %v", a.out, a.err)
	case <-time.After(30 * time.Second):
		t.Fatal("no status report within 30 s")
	}
	if first.Status != tasks.Working || first.Message != support.RefundWaiting || first.Task == "" {
		t.Fatalf("first status report %+v; want working, %q", first, support.RefundWaiting)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bob := connectAs(t, endpoint, "bob-token", "")
	if _, err := bob.GetTask(ctx, first.Task); err == nil || !strings.Contains(err.Error(), "belongs to another caller") {
		t.Errorf("another client read the task: err = %v", err)
	}
	if _, err := bob.CancelTask(ctx, first.Task); err == nil {
		t.Error("another client cancelled the task")
	}
	// tasks/list is not part of the extension (2026-07-28).
	if list, err := bob.ListTasks(ctx); !bob.extTasksOn() && (err != nil || len(list) != 0) {
		t.Errorf("another client lists %+v, %v; want none", list, err)
	}
	if _, err := svc.DecideRefund(ctx, first.Task, true, "refund sent"); err != nil {
		t.Fatal(err)
	}
	var a answer
	select {
	case a = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the call did not end within 60 s of the approval")
	}
	if a.err != nil || !strings.Contains(a.out, `"status":"approved"`) || !strings.Contains(a.out, "refund sent") {
		t.Fatalf("after the approval the model sees %q, %v", a.out, a.err)
	}
	task, err := alice.GetTask(ctx, first.Task)
	if err != nil || task.Status != tasks.Completed {
		t.Errorf("the task after approval: %+v, %v", task, err)
	}
}

// Cancelling the call cancels the task on the server: the request is
// withdrawn, and the operator can no longer decide it.
func TestTaskServeRefundCancel(t *testing.T) {
	endpoint, svc := serveRefunds(t)
	log := newTaskProgressLog()
	alice := connectAs(t, endpoint, "alice-token", "", WithProgress(log.add))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := execWithin(t, ctx, adTool(t, alice, "requestRefund"), `{"orderId":"A-2048","reason":"changed my mind"}`)
		done <- err
	}()
	var id string
	select {
	case p := <-log.seen:
		id = p.Task
	case <-time.After(30 * time.Second):
		t.Fatal("no status report within 30 s")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call did not return within 30 s")
	}
	qctx, qcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer qcancel()
	task, err := alice.GetTask(qctx, id)
	if err != nil || task.Status != tasks.Cancelled {
		t.Fatalf("after cancelling, the task is %+v, %v; want cancelled", task, err)
	}
	if _, err := svc.DecideRefund(qctx, id, true, ""); err == nil {
		t.Error("the operator decided a withdrawn request")
	}
}

// Without a task (the client's "tasks": "required") requestRefund
// answers at once with the request's id and state, and getRefundStatus
// reports the decision later, to the same caller only.
func TestTaskServeRefundPlain(t *testing.T) {
	endpoint, svc := serveRefunds(t)
	alice := connectAs(t, endpoint, "alice-token", mcpconfig.TasksRequired)
	if alice.runsAsTask("requestRefund") {
		t.Fatal(`with "tasks": "required" an optional tool must not run as a task`)
	}
	out, err := execWithin(t, context.Background(), adTool(t, alice, "requestRefund"), `{"orderId":"A-1024","reason":"late"}`)
	if err != nil || !strings.Contains(out, `"status":"pending"`) {
		t.Fatalf("plain requestRefund: %q, %v", out, err)
	}
	list, err := svc.Refunds(context.Background(), 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("operator list: %+v, %v", list, err)
	}
	id := list[0].RefundID
	if _, err := svc.DecideRefund(context.Background(), id, false, "outside the window"); err != nil {
		t.Fatal(err)
	}
	out, err = execWithin(t, context.Background(), adTool(t, alice, "getRefundStatus"), `{"refundId":"`+id+`"}`)
	if err != nil || !strings.Contains(out, `"status":"declined"`) {
		t.Fatalf("getRefundStatus: %q, %v", out, err)
	}
	bob := connectAs(t, endpoint, "bob-token", "")
	if out, err := execWithin(t, context.Background(), adTool(t, bob, "getRefundStatus"), `{"refundId":"`+id+`"}`); err == nil {
		t.Errorf("another caller read the request: %q", out)
	}
}
