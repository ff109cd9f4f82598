package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension's fixture tools (the suite's tasks-* scenarios):
// greet answers at once; slow_compute, failing_job and protocol_error_job
// run as tasks, beside agentapp's own refund tasks, which stay in the
// store. These are kept in memory: they are the suite's, not agentapp's,
// and end with the process.

// maxJobs bounds the fixture's tasks kept at once; the oldest ended ones
// go first.
const maxJobs = 1000

type jobs struct {
	inner mcpserver.TaskBackend // agentapp's refund tasks

	mu   sync.Mutex
	byID map[string]*job
	seq  []string // ids, oldest first
}

type job struct {
	tool    string
	answers []any // an asking job's answers, in order
	caller  string
	task    mcpserver.Task
	cancel  context.CancelFunc
}

var jobTools = []string{"slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}

// askingJobs are the task tools whose tasks wait for the client's input
// (status input_required) from the start: what they ask, keyed by the
// ids tasks/update answers to.
var askingJobs = map[string]func() mcp.InputRequestMap{
	"confirm_delete": func() mcp.InputRequestMap {
		return mcp.InputRequestMap{"confirm-" + rand.Text()[:8]: &mcp.ElicitParams{Message: "Delete the file?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"}}}}
	},
	"multi_input": func() mcp.InputRequestMap {
		return mcp.InputRequestMap{"name-" + rand.Text()[:8]: askText("What is your name?", "name"),
			"confirm-" + rand.Text()[:8]: &mcp.ElicitParams{Message: "Go ahead?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}}}}
	},
}

func jobToolList() []*agent.Tool {
	schema := func(s string) json.RawMessage { return json.RawMessage(s) }
	return []*agent.Tool{
		{Name: "greet", Description: "Greets by name, at once.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"}}}`),
			Execute: func(_ context.Context, raw json.RawMessage) (any, error) {
				var a struct{ Name string }
				_ = json.Unmarshal(raw, &a)
				return fmt.Sprintf("Hello, %s!", a.Name), nil
			}},
		{Name: "slow_compute", Description: "Sleeps for seconds, then answers; runs as a task.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":60},"label":{"type":"string"}}}`),
			Execute:     func(ctx context.Context, raw json.RawMessage) (any, error) { return slowCompute(ctx, raw) }},
		{Name: "failing_job", Description: "Fails as a tool after about a second; runs only as a task.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{}}`),
			Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
				if err := sleep(ctx, time.Second); err != nil {
					return nil, err
				}
				return nil, errors.New("the job failed, as it always does")
			}},
		{Name: "confirm_delete", Description: "Deletes a file once the user confirms; runs as a task that asks.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{"filename":{"type":"string"}}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New("confirm_delete asks before it deletes: call it with the tasks extension")
			}},
		{Name: "multi_input", Description: "Asks two questions at once; runs as a task that asks.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				return nil, errors.New("multi_input asks two questions: call it with the tasks extension")
			}},
		{Name: "test_tool_with_task", Description: "Asks the user's name (an input-required round), then greets them in a task.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{}}`),
			Execute: func(_ context.Context, raw json.RawMessage) (any, error) {
				var a struct{ Name string }
				_ = json.Unmarshal(raw, &a)
				return fmt.Sprintf("Hello, %s! (from a task)", a.Name), nil
			}},
		{Name: "protocol_error_job", Description: "Ends in a protocol-level failure; runs as a task.", ReadOnly: true,
			InputSchema: schema(`{"type":"object","properties":{}}`),
			Execute: func(context.Context, json.RawMessage) (any, error) {
				return nil, errProtocol
			}},
	}
}

var errProtocol = errors.New("internal failure of the job")

func slowCompute(ctx context.Context, raw json.RawMessage) (any, error) {
	var a struct {
		Seconds float64
		Label   string
	}
	_ = json.Unmarshal(raw, &a)
	if err := sleep(ctx, time.Duration(a.Seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return map[string]any{"label": a.Label, "seconds": a.Seconds, "done": true}, nil
}

func (j *jobs) TaskTools() []string         { return append(j.inner.TaskTools(), jobTools...) }
func (j *jobs) RequiredTaskTools() []string { return []string{"failing_job", "test_tool_with_task"} }

// TaskRound asks test_tool_with_task's question before its task is made:
// the task starts once the name has come back, and greets by it.
func (j *jobs) TaskRound(_ context.Context, req *mcp.CallToolRequest) (mcp.InputRequestMap, string, json.RawMessage, error) {
	if req.Params.Name != "test_tool_with_task" {
		return nil, "", nil, nil
	}
	name, ok := elicited(req, "user_name", "name")
	if !ok {
		return mcp.InputRequestMap{"user_name": askText("What is your name?", "name")}, "", nil, nil
	}
	args, err := json.Marshal(map[string]string{"name": name})
	return nil, "", args, err
}

// AnswerTask takes answers to an asking job's questions: each answered
// one is no longer asked, and the job completes with the last answer.
func (j *jobs) AnswerTask(ctx context.Context, caller, id string, responses map[string]json.RawMessage) error {
	j.mu.Lock()
	jb, mine := j.byID[id]
	if !mine {
		j.mu.Unlock()
		if a, ok := j.inner.(mcpserver.TaskAnswerer); ok {
			return a.AnswerTask(ctx, caller, id, responses)
		}
		_, err := j.inner.Task(ctx, caller, id)
		return err
	}
	defer j.mu.Unlock()
	if jb.caller != caller {
		return mcpserver.ErrNoTask
	}
	if jb.task.Status != "input_required" {
		return nil // nothing outstanding: ignored
	}
	for k, raw := range responses {
		if _, asked := jb.task.InputRequests[k]; !asked {
			continue
		}
		var r struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q] is not an elicitation result: %v", k, err)}
		}
		delete(jb.task.InputRequests, k)
		jb.answers = append(jb.answers, map[string]any{"action": r.Action, "content": r.Content})
	}
	jb.task.Updated = time.Now()
	if len(jb.task.InputRequests) == 0 {
		jb.task.Status, jb.task.InputRequests = "completed", nil
		jb.task.Output = map[string]any{"tool": jb.tool, "answers": jb.answers}
	}
	return nil
}

func (j *jobs) StartTask(ctx context.Context, caller, tool string, args json.RawMessage, ttl time.Duration) (*mcpserver.Task, error) {
	if !slices.Contains(jobTools, tool) {
		return j.inner.StartTask(ctx, caller, tool, args, ttl)
	}
	var t *agent.Tool
	for _, c := range jobToolList() {
		if c.Name == tool {
			t = c
		}
	}
	now := time.Now()
	if ask := askingJobs[tool]; ask != nil {
		jb := &job{tool: tool, caller: caller, cancel: func() {}, task: mcpserver.Task{
			ID: "job-" + rand.Text(), Status: "input_required", StatusMessage: "waiting for the client's answers",
			Created: now, Updated: now, TTL: ttl, PollInterval: 200 * time.Millisecond, InputRequests: ask()}}
		j.mu.Lock()
		defer j.mu.Unlock()
		j.add(jb)
		return jb.snapshot(), nil
	}
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	jb := &job{tool: tool, caller: caller, cancel: cancel, task: mcpserver.Task{
		ID: "job-" + rand.Text(), Status: "working", Created: now, Updated: now, TTL: ttl, PollInterval: 200 * time.Millisecond}}
	j.mu.Lock()
	j.add(jb)
	snapshot := jb.snapshot()
	j.mu.Unlock()
	go func() {
		defer cancel()
		out, err := t.Execute(rctx, args)
		j.mu.Lock()
		defer j.mu.Unlock()
		if jb.task.Status != "working" {
			return // cancelled meanwhile
		}
		jb.task.Updated = time.Now()
		switch {
		case errors.Is(err, errProtocol):
			jb.task.Status, jb.task.Failure = "failed", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		case err != nil:
			jb.task.Status, jb.task.ToolError = "completed", fmt.Sprintf("%s failed: %v", tool, err)
		default:
			jb.task.Status, jb.task.Output = "completed", out
		}
	}()
	return snapshot, nil
}

// add keeps jb; j.mu is held.
func (j *jobs) add(jb *job) {
	if j.byID == nil {
		j.byID = map[string]*job{}
	}
	j.byID[jb.task.ID] = jb
	j.seq = append(j.seq, jb.task.ID)
	j.trim()
}

// snapshot copies jb's task, its map too; the jobs' lock is held.
func (jb *job) snapshot() *mcpserver.Task {
	t := jb.task
	t.InputRequests = maps.Clone(t.InputRequests)
	return &t
}

// ended reports whether a task's status is terminal.
func ended(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// trim drops the oldest ended tasks beyond maxJobs; j.mu is held.
func (j *jobs) trim() {
	for i := 0; len(j.byID) > maxJobs && i < len(j.seq); {
		id := j.seq[i]
		if jb := j.byID[id]; jb == nil || ended(jb.task.Status) {
			delete(j.byID, id)
			j.seq = slices.Delete(j.seq, i, i+1)
			continue
		}
		i++
	}
}

func (j *jobs) Task(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	j.mu.Lock()
	jb, mine := j.byID[id]
	var t *mcpserver.Task
	if mine {
		t = jb.snapshot()
	}
	j.mu.Unlock()
	switch {
	case !mine:
		return j.inner.Task(ctx, caller, id)
	case jb.caller != caller:
		return nil, mcpserver.ErrNoTask
	}
	return t, nil
}

func (j *jobs) Tasks(ctx context.Context, caller string) ([]*mcpserver.Task, error) {
	out, err := j.inner.Tasks(ctx, caller)
	if err != nil {
		return nil, err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, id := range slices.Backward(j.seq) {
		if jb := j.byID[id]; jb != nil && jb.caller == caller && len(out) < 100 {
			out = append(out, jb.snapshot())
		}
	}
	return out, nil
}

func (j *jobs) CancelTask(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	j.mu.Lock()
	jb, mine := j.byID[id]
	if !mine {
		j.mu.Unlock()
		return j.inner.CancelTask(ctx, caller, id)
	}
	defer j.mu.Unlock()
	if jb.caller != caller {
		return nil, mcpserver.ErrNoTask
	}
	if ended(jb.task.Status) {
		return nil, mcpserver.ErrTaskEnded
	}
	jb.task.Status, jb.task.Updated, jb.task.InputRequests = "cancelled", time.Now(), nil
	jb.cancel()
	return jb.snapshot(), nil
}
