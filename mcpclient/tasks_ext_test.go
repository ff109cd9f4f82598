package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpclient/stdiofast"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireLog records the bodies of HTTP requests and answers.
type wireLog struct {
	mu   sync.Mutex
	sent []string
	got  []string
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(b))
		w.mu.Lock()
		w.sent = append(w.sent, string(b))
		w.mu.Unlock()
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	w.mu.Lock()
	w.got = append(w.got, string(b))
	w.mu.Unlock()
	return resp, nil
}

func (w *wireLog) find(list *[]string, parts ...string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range *list {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(s, p)
		}
		if all {
			return true
		}
	}
	return false
}

// serveRefundsStateless is serveRefunds over stateless HTTP, where the SDK
// speaks protocol 2026-07-28 (server/discover).
func serveRefundsStateless(t *testing.T) (string, *support.Service) {
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
	ts := httptest.NewServer(mcpserver.NewHTTPHandler(server, &mcpserver.HTTPOptions{Token: "alice-token,bob-token", Stateless: true}))
	t.Cleanup(ts.Close)
	return ts.URL + mcpserver.HTTPPath, svc
}

// With protocol 2026-07-28 both sides declare the tasks extension; the
// server decides that requestRefund runs as a task (resultType "task"),
// the client polls the extension's tasks/get, which carries the result
// once an operator approved, and nobody else can read or cancel the task.
func TestTaskExtRefund(t *testing.T) {
	endpoint, svc := serveRefundsStateless(t)
	wire := &wireLog{}
	log := newTaskProgressLog()
	alice := connectAs(t, endpoint, "alice-token", "", WithProgress(log.add), withHTTPBase(wire))
	if v := alice.session().InitializeResult().ProtocolVersion; v < stdiofast.NewProtocolVersion || !alice.extTasksOn() {
		t.Fatalf("protocol %s, extension on: %v; want 2026-07-28 with the tasks extension", v, alice.extTasksOn())
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
		t.Fatalf("first status report %+v", first)
	}
	if !wire.find(&wire.got, `"resultType":"task"`, first.Task) {
		t.Error(`the server never answered tools/call with resultType "task"`)
	}
	if wire.find(&wire.sent, `"method":"tools/call"`, `"task":{`) {
		t.Error("the client sent params.task; under the extension the server decides")
	}
	if !wire.find(&wire.sent, `"method":"tools/call"`, extTasks) {
		t.Error("the tools/call did not declare the extension")
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
	if !wire.find(&wire.got, `"resultType":"complete"`, `"status":"completed"`, `"result":{`) {
		t.Error("no tasks/get answer carried the completed task's result")
	}
	if wire.find(&wire.sent, `"method":"tasks/result"`) {
		t.Error("the client sent tasks/result, which the extension does not have")
	}
}

// Cancelling a call under the extension sends tasks/cancel, which the
// server acknowledges; the request is withdrawn.
func TestTaskExtRefundCancel(t *testing.T) {
	endpoint, svc := serveRefundsStateless(t)
	wire := &wireLog{}
	log := newTaskProgressLog()
	alice := connectAs(t, endpoint, "alice-token", "", WithProgress(log.add), withHTTPBase(wire))
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
	if !wire.find(&wire.sent, `"method":"tasks/cancel"`, id) {
		t.Error("no tasks/cancel was sent")
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

// tasks/update acknowledges input for the caller's own task under the
// extension; an unknown or another caller's task is invalid params, and a
// client that did not declare the extension is told which capability it
// lacks.
func TestTaskExtUpdate(t *testing.T) {
	endpoint, _ := serveRefundsStateless(t)
	log := newTaskProgressLog()
	alice := connectAs(t, endpoint, "alice-token", "", WithProgress(log.add))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ended := make(chan error, 1)
	go func() {
		_, err := execWithin(t, ctx, adTool(t, alice, "requestRefund"), `{"orderId":"A-1024","reason":"late"}`)
		ended <- err
	}()
	var id string
	select {
	case p := <-log.seen:
		id = p.Task
	case err := <-ended:
		t.Fatalf("requestRefund ended before any status report: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no status report within 30 s")
	}
	update := func(b *Bridge, task string) (string, error) {
		res, err := mcp.CallCustomMethod[*tasks.UpdateParams, *tasks.RawResult](ctx, b.session(), "tasks/update",
			&tasks.UpdateParams{TaskID: task, InputResponses: map[string]any{"k": map[string]any{"action": "accept"}}})
		if err != nil {
			return "", err
		}
		return string(res.Raw), nil
	}
	if got, err := update(alice, id); err != nil || !strings.Contains(got, `"resultType":"complete"`) {
		t.Errorf("tasks/update of one's own task: %s, %v", got, err)
	}
	if _, err := update(alice, "no-such-task"); err == nil || !strings.Contains(err.Error(), "-32602") && !strings.Contains(err.Error(), "no task") {
		t.Errorf("tasks/update of an unknown task: %v", err)
	}
	bob := connectAs(t, endpoint, "bob-token", "")
	if _, err := update(bob, id); err == nil || !strings.Contains(err.Error(), "another caller") {
		t.Errorf("tasks/update of another caller's task: %v", err)
	}
	carol := connectAs(t, endpoint, "bob-token", mcpconfig.TasksNever)
	if carol.extTasksOn() {
		t.Fatal(`with "tasks": "never" the extension must not be declared`)
	}
	if _, err := update(carol, id); err == nil || !strings.Contains(err.Error(), extTasks) {
		t.Errorf("tasks/update without the extension: %v; want the missing capability named", err)
	}
	cancel()
	<-ended
}

// A task's inputRequests are answered as the same requests sent on their
// own: elicitation by the elicitor, roots from the bridge's roots, and a
// request the client does not serve is an error naming it.
func TestTaskExtAnswerInput(t *testing.T) {
	el := &answeringElicitor{content: map[string]any{"name": "Ada"}, asked: make(chan string, 1)}
	b := newBridge(mcpconfig.Server{Name: "x"}, buildOptions([]ConnectOption{WithElicitor(el), WithRoots([]string{t.TempDir()})}))
	if err := b.initRoots(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := b.answerInput(ctx, tasks.InputRequest{Method: "elicitation/create", Params: json.RawMessage(`{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`)})
	if er, ok := res.(*mcp.ElicitResult); err != nil || !ok || er.Action != "accept" || er.Content["name"] != "Ada" {
		t.Errorf("elicitation: %+v, %v", res, err)
	}
	if q := <-el.asked; q != "Your name?" {
		t.Errorf("the elicitor was asked %q", q)
	}
	res, err = b.answerInput(ctx, tasks.InputRequest{Method: "roots/list"})
	if rr, ok := res.(*mcp.ListRootsResult); err != nil || !ok || len(rr.Roots) != 1 {
		t.Errorf("roots: %+v, %v", res, err)
	}
	if _, err := b.answerInput(ctx, tasks.InputRequest{Method: "sampling/createMessage", Params: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), "does not offer sampling") {
		t.Errorf("sampling without a sampler: %v", err)
	}
	if _, err := b.answerInput(ctx, tasks.InputRequest{Method: "weird/thing"}); err == nil || !strings.Contains(err.Error(), `"weird/thing"`) {
		t.Errorf("an unknown request: %v", err)
	}
}
