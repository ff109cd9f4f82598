package mcpserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askingJobs is a task backend whose task waits for input, and whose
// tool "ask" first asks a name in an input-required round.
type askingJobs struct {
	mu      sync.Mutex
	task    mcpserver.Task
	args    json.RawMessage // what the last task started with
	answers map[string]json.RawMessage
}

func (a *askingJobs) TaskTools() []string { return []string{"ask"} }
func (a *askingJobs) StartTask(_ context.Context, _, _ string, args json.RawMessage, _ time.Duration) (*mcpserver.Task, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.args = args
	t := a.task
	return &t, nil
}
func (a *askingJobs) Task(_ context.Context, _, id string) (*mcpserver.Task, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id != a.task.ID {
		return nil, mcpserver.ErrNoTask
	}
	t := a.task
	return &t, nil
}
func (a *askingJobs) Tasks(context.Context, string) ([]*mcpserver.Task, error) { return nil, nil }
func (a *askingJobs) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrTaskEnded
}
func (a *askingJobs) AnswerTask(_ context.Context, _, id string, responses map[string]json.RawMessage) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if id != a.task.ID {
		return mcpserver.ErrNoTask
	}
	a.answers = responses
	return nil
}
func (a *askingJobs) TaskRound(_ context.Context, req *mcp.CallToolRequest) (mcp.InputRequestMap, string, json.RawMessage, error) {
	if r, ok := req.Params.InputResponses["user_name"].(*mcp.ElicitResult); ok {
		args, err := json.Marshal(map[string]any{"name": r.Content["name"]})
		return nil, "", args, err
	}
	return mcp.InputRequestMap{"user_name": &mcp.ElicitParams{Message: "Your name?"}}, "", nil, nil
}

// TestExtTaskInput: under the tasks extension a task tool may ask in an
// input-required round before its task is made (the answer reaches the
// task's arguments); tasks/get shows an input_required task's
// inputRequests (the created task's answer does not); tasks/update hands
// the answers to the backend, and refuses one that is not an object.
func TestExtTaskInput(t *testing.T) {
	jobs := &askingJobs{task: mcpserver.Task{ID: "t1", Status: "input_required", Created: time.Now(), Updated: time.Now(),
		InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Sure?"}}}}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tasks: jobs, Tools: []*agent.Tool{{
		Name: "ask", Description: "asks", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
	}}})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: "tok"}))
	defer ts.Close()
	call := func(method, name, params string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s: %s", method, raw)
		}
		return got
	}
	result := func(m map[string]any) map[string]any { r, _ := m["result"].(map[string]any); return r }

	round := result(call("tools/call", "ask", `"name":"ask"`))
	reqs, _ := round["inputRequests"].(map[string]any)
	if round["resultType"] != "input_required" || round["taskId"] != nil || reqs["user_name"].(map[string]any)["method"] != "elicitation/create" {
		t.Fatalf("first round: %v, want input_required asking user_name", round)
	}
	created := result(call("tools/call", "ask", `"name":"ask","inputResponses":{"user_name":{"action":"accept","content":{"name":"Ada"}}}`))
	if created["resultType"] != "task" || created["taskId"] != "t1" || created["inputRequests"] != nil {
		t.Fatalf("second round: %v, want the task without inputRequests", created)
	}
	if string(jobs.args) != `{"name":"Ada"}` {
		t.Errorf("the task started with %s, want the answered name", jobs.args)
	}

	got := result(call("tasks/get", "t1", `"taskId":"t1"`))
	if asked, _ := got["inputRequests"].(map[string]any); got["status"] != "input_required" || asked["confirm"].(map[string]any)["method"] != "elicitation/create" {
		t.Fatalf("tasks/get: %v, want input_required with its inputRequests", got)
	}
	if ack := result(call("tasks/update", "t1", `"taskId":"t1","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}}`)); len(ack) != 1 || ack["resultType"] != "complete" {
		t.Errorf("tasks/update: %v, want the empty ack", ack)
	}
	if string(jobs.answers["confirm"]) != `{"action":"accept","content":{"ok":true}}` {
		t.Errorf("the backend got %q, want the answer", jobs.answers)
	}
	bad := call("tasks/update", "t1", `"taskId":"t1","inputResponses":{"confirm":5}`)
	if e, _ := bad["error"].(map[string]any); e["code"] != float64(-32602) || !strings.Contains(e["message"].(string), "confirm") {
		t.Errorf("a response that is not an object: %v, want -32602 naming it", bad)
	}
}

// recordingJobs is fakeJobs that keeps the arguments a task started with.
type recordingJobs struct {
	fakeJobs
	args json.RawMessage
}

func (r *recordingJobs) StartTask(ctx context.Context, caller, tool string, args json.RawMessage, ttl time.Duration) (*mcpserver.Task, error) {
	r.args = args
	return r.fakeJobs.StartTask(ctx, caller, tool, args, ttl)
}

// TestExtTaskQuestion: a task tool's question (Options.Questions, as
// requestRefund's reason) is asked under the tasks extension before the
// task is made, and the task starts with the answer, checked against the
// signed requestState; a retry with altered state is refused.
func TestExtTaskQuestion(t *testing.T) {
	jobs := &recordingJobs{fakeJobs: fakeJobs{task: mcpserver.Task{ID: "t1", Created: time.Now(), Updated: time.Now()}}}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tasks: jobs,
		Questions: map[string]mcpserver.Question{"job": {Arg: "reason", Message: "Why?", Description: "the reason"}},
		Tools: []*agent.Tool{{
			Name: "job", Description: "a job", InputSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) { return "ran", nil },
		}}})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Token: "tok"}))
	defer ts.Close()
	call := func(params string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"job",` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, _ := http.NewRequest(http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer tok")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "job")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%s", raw)
		}
		return got
	}
	round, _ := call(`"arguments":{}`)["result"].(map[string]any)
	state, _ := round["requestState"].(string)
	if asks, _ := round["inputRequests"].(map[string]any); round["resultType"] != "input_required" || asks["reason"] == nil || state == "" {
		t.Fatalf("first round: %v, want the reason asked", round)
	}
	quoted, _ := json.Marshal(state)
	answer := `"inputResponses":{"reason":{"action":"accept","content":{"reason":"late"}}}`
	if bad := call(`"arguments":{},` + answer + `,"requestState":"x` + state + `"`); bad["error"] == nil {
		t.Errorf("altered requestState: %v, want an error", bad)
	}
	created, _ := call(`"arguments":{},` + answer + `,"requestState":` + string(quoted))["result"].(map[string]any)
	if created["resultType"] != "task" || string(jobs.args) != `{"reason":"late"}` {
		t.Fatalf("second round: %v (task args %s), want the task with the reason", created, jobs.args)
	}
}
