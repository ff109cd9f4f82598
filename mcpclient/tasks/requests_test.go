package tasks

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func rtRequest(t *testing.T, id any, method, params string) *jsonrpc.Request {
	t.Helper()
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Request{ID: rid, Method: method, Params: json.RawMessage(params)}
}

func taskOfAnswer(t *testing.T, resp *jsonrpc.Response) wireRequestTask {
	t.Helper()
	if resp == nil || resp.Error != nil {
		t.Fatalf("answer %+v; want a task", resp)
	}
	var r struct {
		Task wireRequestTask `json:"task"`
	}
	if err := json.Unmarshal(resp.Result, &r); err != nil || r.Task.TaskID == "" {
		var w wireRequestTask
		if err := json.Unmarshal(resp.Result, &w); err != nil || w.TaskID == "" {
			t.Fatalf("answer %s is not a task", resp.Result)
		}
		return w
	}
	return r.Task
}

// A task request goes to the SDK without params.task under our id; the
// SDK's answer to that id becomes the task's result, with _meta tying it
// to the task; tasks/get follows its status.
func TestRequestTasksLifecycle(t *testing.T) {
	rt := NewRequests(true, true)
	sent := make(chan *jsonrpc.Response, 4)
	send := func(r *jsonrpc.Response) { sent <- r }
	forSDK, answer := rt.Start(rtRequest(t, float64(7), "elicitation/create", `{"message":"name?","task":{"ttl":60000},"requestedSchema":{"type":"object"}}`))
	task := taskOfAnswer(t, answer)
	if answer.ID.Raw() != int64(7) || task.Status != InputRequired || task.TTL != 60000 {
		t.Fatalf("answer to the server: id %v, task %+v", answer.ID.Raw(), task)
	}
	if strings.Contains(string(forSDK.Params), `"task"`) || forSDK.ID.Raw() != requestTaskIDPrefix+task.TaskID || forSDK.Method != "elicitation/create" {
		t.Fatalf("request for the SDK: %v %s %s", forSDK.ID.Raw(), forSDK.Method, forSDK.Params)
	}
	get, _ := rt.Answer(rtRequest(t, float64(8), "tasks/get", `{"taskId":"`+task.TaskID+`"}`), send)
	if got := taskOfAnswer(t, get); got.Status != InputRequired {
		t.Errorf("tasks/get while it runs: %+v", got)
	}
	if resp, _ := rt.Answer(rtRequest(t, float64(9), "tasks/result", `{"taskId":"`+task.TaskID+`"}`), send); resp != nil {
		t.Fatalf("tasks/result answered before the task ended: %+v", resp)
	}
	if !rt.Finish(&jsonrpc.Response{ID: forSDK.ID, Result: json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}) {
		t.Fatal("the SDK's answer to the task request was not taken")
	}
	if rt.Finish(&jsonrpc.Response{ID: answer.ID, Result: json.RawMessage(`{}`)}) {
		t.Fatal("an answer to another request was taken")
	}
	var res *jsonrpc.Response
	select {
	case res = <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("tasks/result was not answered within 10 s of the task's end")
	}
	if res.ID.Raw() != int64(9) || !strings.Contains(string(res.Result), `"name":"Ada"`) || !strings.Contains(string(res.Result), relatedKey) {
		t.Fatalf("tasks/result sent %v %s", res.ID.Raw(), res.Result)
	}
	get, _ = rt.Answer(rtRequest(t, float64(10), "tasks/get", `{"taskId":"`+task.TaskID+`"}`), send)
	if got := taskOfAnswer(t, get); got.Status != Completed {
		t.Errorf("tasks/get after the end: %+v", got)
	}
	list, _ := rt.Answer(rtRequest(t, float64(11), "tasks/list", `{}`), send)
	if !strings.Contains(string(list.Result), task.TaskID) {
		t.Errorf("tasks/list: %s", list.Result)
	}
}

// tasks/cancel cancels the SDK's handler (notifications/cancelled for our
// id), and a cancelled or ended task cannot be cancelled again.
func TestRequestTasksCancel(t *testing.T) {
	rt := NewRequests(true, false)
	send := func(*jsonrpc.Response) {}
	forSDK, answer := rt.Start(rtRequest(t, "s1", "sampling/createMessage", `{"messages":[],"maxTokens":5,"task":{}}`))
	task := taskOfAnswer(t, answer)
	if task.Status != Working || task.TTL != defaultRequestTaskTTL.Milliseconds() {
		t.Errorf("task %+v", task)
	}
	resp, cancelSDK := rt.Answer(rtRequest(t, "c1", "tasks/cancel", `{"taskId":"`+task.TaskID+`"}`), send)
	if got := taskOfAnswer(t, resp); got.Status != Cancelled {
		t.Errorf("tasks/cancel answered %+v", got)
	}
	if cancelSDK == nil || cancelSDK.Method != "notifications/cancelled" || !strings.Contains(string(cancelSDK.Params), `"requestId":"`+forSDK.ID.Raw().(string)+`"`) {
		t.Fatalf("the SDK is told %+v; want notifications/cancelled for %v", cancelSDK, forSDK.ID.Raw())
	}
	if !rt.Finish(&jsonrpc.Response{ID: forSDK.ID, Result: json.RawMessage(`{}`)}) {
		t.Error("the late answer of a cancelled task went to the server")
	}
	resp, _ = rt.Answer(rtRequest(t, "c2", "tasks/cancel", `{"taskId":"`+task.TaskID+`"}`), send)
	if resp.Error == nil || !strings.Contains(resp.Error.Error(), "has ended") {
		t.Errorf("second cancel: %+v", resp)
	}
	resp, _ = rt.Answer(rtRequest(t, "g", "tasks/get", `{"taskId":"nope"}`), send)
	if resp.Error == nil || !strings.Contains(resp.Error.Error(), `no task "nope"`) {
		t.Errorf("unknown task: %+v", resp)
	}
	resp, _ = rt.Answer(rtRequest(t, "g2", "tasks/get", `{}`), send)
	if resp.Error == nil || !strings.Contains(resp.Error.Error(), "needs params.taskId") {
		t.Errorf("no task id: %+v", resp)
	}
}

// The tasks a connection keeps are capped, and expire with their TTL.
func TestRequestTasksCapAndExpiry(t *testing.T) {
	rt := NewRequests(true, false)
	now := time.Unix(1_700_000_000, 0)
	rt.now = func() time.Time { return now }
	var first string
	for i := range maxRequestTasks {
		_, answer := rt.Start(rtRequest(t, float64(i), "sampling/createMessage", `{"task":{"ttl":60000}}`))
		if i == 0 {
			first = taskOfAnswer(t, answer).TaskID
		}
	}
	_, answer := rt.Start(rtRequest(t, "over", "sampling/createMessage", `{"task":{}}`))
	if answer.Error == nil || !strings.Contains(answer.Error.Error(), "its limit") {
		t.Fatalf("task %d: %+v; want the limit's error", maxRequestTasks+1, answer)
	}
	now = now.Add(2 * time.Minute) // past the TTL of them all
	if rt.get(first) != nil {
		t.Error("an expired task is still kept")
	}
	if _, answer = rt.Start(rtRequest(t, "again", "sampling/createMessage", `{"task":{"ttl":999999999}}`)); taskOfAnswer(t, answer).TTL != requestTaskTTLCap.Milliseconds() {
		t.Errorf("a TTL above the cap: %s", answer.Result)
	}
}
