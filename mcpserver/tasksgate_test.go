package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestTasksMethodsAt2026: at protocol 2026-07-28 the task methods are the
// extension's: without it declared, tasks/get and tasks/cancel answer
// -32021 naming it; tasks/list and tasks/result do not exist (-32601).
func TestTasksMethodsAt2026(t *testing.T) {
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(newDomain(t).options()), nil))
	defer ts.Close()
	call := func(method string, ext bool) (code int, data string) {
		caps := `{}`
		if ext {
			caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{"taskId":"no-such-task","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got struct {
			Error struct {
				Code int             `json:"code"`
				Data json.RawMessage `json:"data"`
			} `json:"error"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		return got.Error.Code, string(got.Error.Data)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if code, data := call(m, false); code != -32021 || !strings.Contains(data, "io.modelcontextprotocol/tasks") {
			t.Errorf("%s without the extension: %d %s, want -32021 naming it", m, code, data)
		}
		if code, _ := call(m, true); code == -32021 || code == -32601 {
			t.Errorf("%s with the extension: %d, want the task's own error", m, code)
		}
	}
	for _, m := range []string{"tasks/list", "tasks/result"} {
		if code, _ := call(m, true); code != -32601 {
			t.Errorf("%s: %d, want -32601", m, code)
		}
	}
}

// fakeJobs runs the tool "job" as a task (required) whose state the test
// sets.
type fakeJobs struct{ task mcpserver.Task }

func (f *fakeJobs) TaskTools() []string         { return []string{"job"} }
func (f *fakeJobs) RequiredTaskTools() []string { return []string{"job"} }
func (f *fakeJobs) StartTask(context.Context, string, string, json.RawMessage, time.Duration) (*mcpserver.Task, error) {
	t := f.task
	t.Status = "working"
	return &t, nil
}
func (f *fakeJobs) Task(_ context.Context, _, id string) (*mcpserver.Task, error) {
	if id != f.task.ID {
		return nil, mcpserver.ErrNoTask
	}
	t := f.task
	return &t, nil
}
func (f *fakeJobs) Tasks(context.Context, string) ([]*mcpserver.Task, error) { return nil, nil }
func (f *fakeJobs) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrTaskEnded
}

// TestExtTaskShapes: a tool that runs only as a task is refused (-32021)
// to a 2026-07-28 request without the extension, listed as "required",
// and a legacy params.task is ignored at 2026-07-28; a task that failed
// carries its error, one whose tool failed is completed with an isError
// result; an Mcp-Name that is not the task's id is refused (-32020).
func TestExtTaskShapes(t *testing.T) {
	jobs := &fakeJobs{task: mcpserver.Task{ID: "t1", Created: time.Now(), Updated: time.Now()}}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tasks: jobs, Tools: []*agent.Tool{{
		Name: "job", Description: "a job", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
	}}})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: "tok"}))
	defer ts.Close()
	call := func(method, params string, ext bool, header map[string]string) (int, map[string]any) {
		caps := `{}`
		if ext {
			caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var got map[string]any
		raw, _ := io.ReadAll(res.Body)
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		return res.StatusCode, got
	}
	code := func(m map[string]any) any { e, _ := m["error"].(map[string]any); return e["code"] }
	name := map[string]string{"Mcp-Name": "job"}
	if _, got := call("tools/call", `"name":"job"`, false, name); code(got) != float64(-32021) {
		t.Errorf("required task tool without the extension: %v, want -32021", got)
	}
	if _, got := call("tools/call", `"name":"job","task":{"ttl":60000}`, false, name); code(got) != float64(-32021) {
		t.Errorf("a legacy params.task at 2026-07-28 made a task: %v", got)
	}
	if _, got := call("tools/call", `"name":"job"`, true, name); got["result"].(map[string]any)["resultType"] != "task" {
		t.Errorf("with the extension: %v, want a task", got)
	}
	if _, got := call("tools/list", `"cursor":null`, true, nil); !strings.Contains(fmt.Sprint(got), "taskSupport:required") {
		t.Errorf("tools/list: %v, want taskSupport required", got)
	}
	jobs.task.Status, jobs.task.Failure = "failed", &jsonrpc.Error{Code: -32603, Message: "boom"}
	if _, got := call("tasks/get", `"taskId":"t1"`, true, nil); fmt.Sprint(got["result"].(map[string]any)["error"]) != "map[code:-32603 message:boom]" {
		t.Errorf("failed task: %v, want its error", got)
	}
	jobs.task.Status, jobs.task.Failure, jobs.task.ToolError = "completed", nil, "job failed: no"
	_, got := call("tasks/get", `"taskId":"t1"`, true, nil)
	if r, _ := got["result"].(map[string]any)["result"].(map[string]any); r["isError"] != true || !strings.Contains(fmt.Sprint(r["content"]), "job failed: no") {
		t.Errorf("task whose tool failed: %v, want completed with an isError result", got)
	}
	if status, got := call("tasks/get", `"taskId":"t1"`, true, map[string]string{"Mcp-Name": "t2"}); status != 400 || code(got) != float64(-32020) {
		t.Errorf("Mcp-Name of another task: %d %v, want 400 with -32020", status, got)
	}
}
