package mcpclient

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskProgressLog collects the progress reports of a bridge.
type taskProgressLog struct {
	mu   sync.Mutex
	all  []Progress
	seen chan Progress
}

func newTaskProgressLog() *taskProgressLog { return &taskProgressLog{seen: make(chan Progress, 100)} }

func (l *taskProgressLog) add(p Progress) {
	l.mu.Lock()
	l.all = append(l.all, p)
	l.mu.Unlock()
	select {
	case l.seen <- p:
	default:
	}
}

func (l *taskProgressLog) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, p := range l.all {
		s = append(s, p.String())
	}
	return s
}

// answeringElicitor accepts every form with fixed content.
type answeringElicitor struct {
	content map[string]any
	asked   chan string
}

func (e *answeringElicitor) Elicit(_ context.Context, _ string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	select {
	case e.asked <- p.Message:
	default:
	}
	return &mcp.ElicitResult{Action: "accept", Content: e.content}, nil
}

func connectEverything(t *testing.T, opts ...ConnectOption) *Bridge {
	t.Helper()
	bin := peerBin(t, "mcp-server-everything")
	opts = append([]ConnectOption{WithGracePeriods(2*time.Second, 2*time.Second)}, opts...)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func execWithin(t *testing.T, ctx context.Context, tl *agent.Tool, args string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := tl.Execute(ctx, []byte(args))
	if err != nil {
		return "", err
	}
	s, err := agent.FormatOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	return s, nil
}

// simulate-research-query requires a task (execution.taskSupport
// "required"): it runs as one, and each stage is reported as it comes.
func TestTaskPeerResearchQuery(t *testing.T) {
	log := newTaskProgressLog()
	b := connectEverything(t, WithProgress(log.add))
	if got := b.TaskSupport("simulate-research-query"); got != tasks.Required {
		t.Fatalf("TaskSupport = %q, want required", got)
	}
	if !b.serverTasks().ToolsCall {
		t.Fatalf("ServerTasks = %+v; server-everything declares tasks.requests.tools.call", b.serverTasks())
	}
	if !b.runsAsTask("simulate-research-query") || b.runsAsTask("echo") {
		t.Fatal("RunsAsTask: want true for simulate-research-query, false for echo")
	}
	tl := adTool(t, b, "simulate-research-query")
	// The call's own hook (WithTaskStatus) gets the same reports, with the
	// call's context.
	type mark struct{}
	var (
		hookMu  sync.Mutex
		hooked  []string
		ownCtxs = true
	)
	ctx := WithTaskStatus(context.WithValue(context.Background(), mark{}, "this call"), func(ctx context.Context, p Progress) {
		hookMu.Lock()
		defer hookMu.Unlock()
		hooked = append(hooked, p.Status+": "+p.Message)
		ownCtxs = ownCtxs && ctx.Value(mark{}) == "this call"
	})
	got, err := execWithin(t, ctx, tl, `{"topic":"gophers"}`)
	if err != nil {
		t.Fatalf("simulate-research-query: %v", err)
	}
	hookMu.Lock()
	if len(hooked) != len(log.lines()) || len(hooked) < 3 || !ownCtxs {
		t.Errorf("the call's hook got %q (own contexts: %v); want the %d reports the connection's hook got", hooked, ownCtxs, len(log.lines()))
	}
	hookMu.Unlock()
	if !strings.Contains(got, "# Research Report: gophers") {
		t.Errorf("the model sees %.200q; want the report", got)
	}
	lines := strings.Join(log.lines(), "\n")
	for _, want := range []string{"simulate-research-query ⋯ task ", " working: Gathering sources...", "⋯ completed"} {
		if !strings.Contains(lines, want) {
			t.Errorf("status reports:\n%s\nwant a line with %q", lines, want)
		}
	}
	listed, err := b.ListTasks(context.Background())
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if len(listed) != 1 || listed[0].Status != tasks.Completed {
		t.Errorf("ListTasks = %+v; want the one completed task", listed)
	}
}

// With ambiguous: true the task asks for input (input_required); the
// question reaches the elicitor and its answer the server.
func TestTaskPeerInputRequired(t *testing.T) {
	log := newTaskProgressLog()
	el := &answeringElicitor{content: map[string]any{"interpretation": "snake"}, asked: make(chan string, 1)}
	b := connectEverything(t, WithProgress(log.add), WithElicitor(el))
	got, err := execWithin(t, context.Background(), adTool(t, b, "simulate-research-query"), `{"topic":"python","ambiguous":true}`)
	if err != nil {
		t.Fatalf("simulate-research-query: %v", err)
	}
	select {
	case q := <-el.asked:
		if !strings.Contains(q, "python") {
			t.Errorf("the question was %q", q)
		}
	default:
		t.Error("the elicitor was never asked")
	}
	if !strings.Contains(got, "Research Report: python (snake)") {
		t.Errorf("the model sees %.300q; want the report with the answer snake", got)
	}
	if lines := strings.Join(log.lines(), "\n"); !strings.Contains(lines, "⋯ input_required: ") {
		t.Errorf("status reports:\n%s\nwant the input_required one", lines)
	}
}

// Cancelling the call's context cancels the task on the server.
func TestTaskPeerCancel(t *testing.T) {
	log := newTaskProgressLog()
	b := connectEverything(t, WithProgress(log.add))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := execWithin(t, ctx, adTool(t, b, "simulate-research-query"), `{"topic":"go"}`)
		done <- err
	}()
	var id string
	select {
	case p := <-log.seen:
		id = p.Task
	case <-time.After(30 * time.Second):
		t.Fatal("no status report within 30 s")
	}
	if id == "" {
		t.Fatal("the status report names no task")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the cancelled call returned %v; want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the cancelled call did not return within 30 s")
	}
	qctx, qcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer qcancel()
	task, err := b.GetTask(qctx, id)
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if task.Status != tasks.Cancelled {
		t.Errorf("after the call was cancelled the server has the task %s; want cancelled (tasks/cancel sent)", task.Status)
	}
}

// With "tasks": "never" a tool that requires a task is not called, and
// the model is told why, not to fix its arguments.
func TestTaskPeerTasksNever(t *testing.T) {
	bin := peerBin(t, "mcp-server-everything")
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}, Tasks: mcpconfig.TasksNever}, WithGracePeriods(2*time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = execWithin(t, context.Background(), adTool(t, b, "simulate-research-query"), `{"topic":"go"}`)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTask {
		t.Fatalf("err = %v; want a CallError of KindTask", err)
	}
	if msg := err.Error(); strings.Contains(msg, "fix the arguments") || !strings.Contains(msg, "tasks are turned off") {
		t.Errorf("the model sees %q", msg)
	}
}
