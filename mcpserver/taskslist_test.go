package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
)

// pagedTasks is a TaskBackend of n tasks of one caller that pages by
// three, its cursor the index of the next task.
type pagedTasks struct{ n int }

func (b pagedTasks) TaskTools() []string { return []string{"slow"} }
func (b pagedTasks) StartTask(context.Context, string, string, json.RawMessage, time.Duration) (*mcpserver.Task, error) {
	return nil, fmt.Errorf("not in this test")
}
func (b pagedTasks) Task(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrNoTask
}
func (b pagedTasks) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrNoTask
}
func (b pagedTasks) task(i int) *mcpserver.Task {
	return &mcpserver.Task{ID: fmt.Sprintf("task-%02d", i), Status: "working", Created: time.Unix(0, 0), Updated: time.Unix(0, 0), TTL: time.Hour}
}

// Tasks is the unpaged list: the first three, as a bounded list is.
func (b pagedTasks) Tasks(context.Context, string) ([]*mcpserver.Task, error) {
	return []*mcpserver.Task{b.task(0), b.task(1), b.task(2)}, nil
}

func (b pagedTasks) TasksPage(_ context.Context, _, cursor string) ([]*mcpserver.Task, string, error) {
	from := 0
	if cursor != "" {
		i, err := strconv.Atoi(strings.TrimPrefix(cursor, "c"))
		if err != nil || !strings.HasPrefix(cursor, "c") || i < 0 || i > b.n {
			return nil, "", mcpserver.ErrBadCursor
		}
		from = i
	}
	var out []*mcpserver.Task
	for i := from; i < min(from+3, b.n); i++ {
		out = append(out, b.task(i))
	}
	next := ""
	if from+3 < b.n {
		next = "c" + strconv.Itoa(from+3)
	}
	return out, next, nil
}

// TestTasksListPages (issue 43, item 4): tasks/list passes the client's
// cursor to a backend that pages and answers nextCursor while there is
// more, so every task can be listed; a cursor the server did not hand out
// is an invalid-params error.
func TestTasksListPages(t *testing.T) {
	r, _ := directSession(t, &mcpserver.Options{Version: "test", Tasks: pagedTasks{n: 8}}, true)
	r.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	r.receive()
	r.send(mcpserver.InitializedLine)
	var ids []string
	cursor := ""
	for page := 0; page < 10; page++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tasks/list","params":%s}`, page+1, params))
		var ans struct {
			Result struct {
				Tasks []struct {
					TaskID string `json:"taskId"`
				} `json:"tasks"`
				NextCursor string `json:"nextCursor"`
			} `json:"result"`
			Error any `json:"error"`
		}
		line := receiveWithin(t, r, 10*time.Second, "tasks/list")
		if err := json.Unmarshal([]byte(line), &ans); err != nil || ans.Error != nil {
			t.Fatalf("tasks/list page %d: %s", page+1, line)
		}
		for _, tk := range ans.Result.Tasks {
			ids = append(ids, tk.TaskID)
		}
		if cursor = ans.Result.NextCursor; cursor == "" {
			break
		}
	}
	if len(ids) != 8 || ids[0] != "task-00" || ids[7] != "task-07" {
		t.Errorf("the pages listed %v; want task-00 … task-07", ids)
	}
	r.send(`{"jsonrpc":"2.0","id":"bad","method":"tasks/list","params":{"cursor":"forged"}}`)
	if line := receiveWithin(t, r, 10*time.Second, "a forged cursor"); !strings.Contains(line, `"code":-32602`) || !strings.Contains(line, "cursor") {
		t.Errorf("a forged cursor: %s; want invalid params naming the cursor", line)
	}
}
