package main

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

type noTasks struct{}

func (noTasks) TaskTools() []string { return nil }
func (noTasks) StartTask(context.Context, string, string, json.RawMessage, time.Duration) (*mcpserver.Task, error) {
	return nil, errors.New("none")
}
func (noTasks) Task(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrNoTask
}
func (noTasks) Tasks(context.Context, string) ([]*mcpserver.Task, error) { return nil, nil }
func (noTasks) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrNoTask
}

// TestAskingJobs: multi_input waits with two questions; an answer to one
// leaves only the other asked, and the last one completes the task with
// both answers; another caller cannot answer; confirm_delete can be
// cancelled while it waits.
func TestAskingJobs(t *testing.T) {
	ctx := context.Background()
	j := &jobs{inner: noTasks{}}
	task, err := j.StartTask(ctx, "me", "multi_input", json.RawMessage(`{}`), time.Hour)
	if err != nil || task.Status != "input_required" || len(task.InputRequests) != 2 {
		t.Fatalf("multi_input: %v %+v, want input_required with two questions", err, task)
	}
	keys := slices.Sorted(maps.Keys(task.InputRequests))
	answer := func(caller, key string) error {
		return j.AnswerTask(ctx, caller, task.ID, map[string]json.RawMessage{key: json.RawMessage(`{"action":"accept","content":{"confirm":true}}`), "unknown": json.RawMessage(`{}`)})
	}
	if err := answer("other", keys[0]); !errors.Is(err, mcpserver.ErrNoTask) {
		t.Errorf("another caller's answer: %v, want ErrNoTask", err)
	}
	if err := answer("me", keys[0]); err != nil {
		t.Fatal(err)
	}
	got, _ := j.Task(ctx, "me", task.ID)
	if _, still := got.InputRequests[keys[1]]; got.Status != "input_required" || len(got.InputRequests) != 1 || !still {
		t.Fatalf("after one answer: %+v, want only %s still asked", got, keys[1])
	}
	if err := answer("me", keys[1]); err != nil {
		t.Fatal(err)
	}
	got, _ = j.Task(ctx, "me", task.ID)
	if got.Status != "completed" || got.InputRequests != nil || len(got.Output.(map[string]any)["answers"].([]any)) != 2 {
		t.Fatalf("after both answers: %+v, want completed with both", got)
	}

	cd, _ := j.StartTask(ctx, "me", "confirm_delete", json.RawMessage(`{"filename":"x"}`), time.Hour)
	if c, err := j.CancelTask(ctx, "me", cd.ID); err != nil || c.Status != "cancelled" || c.InputRequests != nil {
		t.Fatalf("cancel while asking: %v %+v", err, c)
	}
}
