package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
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
	caller string
	task   mcpserver.Task
	cancel context.CancelFunc
}

var jobTools = []string{"slow_compute", "failing_job", "protocol_error_job"}

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
func (j *jobs) RequiredTaskTools() []string { return []string{"failing_job"} }

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
	rctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	jb := &job{caller: caller, cancel: cancel, task: mcpserver.Task{
		ID: "job-" + rand.Text(), Status: "working", Created: now, Updated: now, TTL: ttl, PollInterval: 200 * time.Millisecond}}
	j.mu.Lock()
	if j.byID == nil {
		j.byID = map[string]*job{}
	}
	j.byID[jb.task.ID] = jb
	j.seq = append(j.seq, jb.task.ID)
	j.trim()
	snapshot := jb.task
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
	return &snapshot, nil
}

// trim drops the oldest ended tasks beyond maxJobs; j.mu is held.
func (j *jobs) trim() {
	for i := 0; len(j.byID) > maxJobs && i < len(j.seq); {
		id := j.seq[i]
		if jb := j.byID[id]; jb == nil || jb.task.Status != "working" {
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
	var t mcpserver.Task
	if mine {
		t = jb.task
	}
	j.mu.Unlock()
	switch {
	case !mine:
		return j.inner.Task(ctx, caller, id)
	case jb.caller != caller:
		return nil, mcpserver.ErrNoTask
	}
	return &t, nil
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
			t := jb.task
			out = append(out, &t)
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
	if jb.task.Status != "working" {
		return nil, mcpserver.ErrTaskEnded
	}
	jb.task.Status, jb.task.Updated = "cancelled", time.Now()
	jb.cancel()
	t := jb.task
	return &t, nil
}
