package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of polling: the server's pollInterval is used within them, and
// the wait grows while nothing changes.
const (
	// maxPollFailures is how many tasks/get in a row may fail (a dropped
	// HTTP request) before the call gives up.
	maxPollFailures = 3
	// taskCancelTimeout bounds the tasks/cancel sent when a call is
	// abandoned.
	taskCancelTimeout = 5 * time.Second
	// maxTaskList caps the tasks ListTasks gathers over all pages.
	maxTaskList = 1000
)

// taskCapabilities is what a server said in initialize about tasks.
type taskCapabilities struct {
	// ToolsCall: tools/call may run as a task.
	ToolsCall bool
	List      bool
	Cancel    bool
}

// taskError is the error of a tool call that ran as a task and did not
// deliver a result: the server cancelled it, its bound expired, polling
// failed, or the server does not run the tool as a task. Its message is
// written for the model.
type taskError struct {
	Server, Tool, TaskID string
	msg                  string
	Err                  error
}

func (e *taskError) Error() string { return e.msg }
func (e *taskError) Unwrap() error { return e.Err }

// recordTaskSupport notes each tool's execution.taskSupport from a
// tools/list result; c.mu is held.
func (c *capture) recordTaskSupport(result json.RawMessage) {
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	if c.taskSupport == nil {
		c.taskSupport = map[string]string{}
	}
	for _, t := range page.Tools {
		if t.Execution != nil && t.Execution.TaskSupport != "" {
			c.taskSupport[t.Name] = t.Execution.TaskSupport
		}
	}
}

// recordInit notes the server's tasks capability from an initialize
// result.
func (c *capture) recordInit(result json.RawMessage) {
	var init struct {
		Capabilities struct {
			Tasks *struct {
				List     json.RawMessage `json:"list"`
				Cancel   json.RawMessage `json:"cancel"`
				Requests struct {
					Tools struct {
						Call json.RawMessage `json:"call"`
					} `json:"tools"`
				} `json:"requests"`
			} `json:"tasks"`
		} `json:"capabilities"`
		ServerInfo json.RawMessage `json:"serverInfo"`
	}
	if json.Unmarshal(result, &init) != nil || init.ServerInfo == nil {
		return // not an initialize result
	}
	var tc taskCapabilities
	if t := init.Capabilities.Tasks; t != nil {
		tc = taskCapabilities{ToolsCall: t.Requests.Tools.Call != nil, List: t.List != nil, Cancel: t.Cancel != nil}
	}
	c.mu.Lock()
	c.tasks = tc
	c.mu.Unlock()
}

func (c *capture) toolTaskSupport(tool string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taskSupport[tool]
}

func (c *capture) taskCaps() taskCapabilities {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks
}

// TaskSupport returns a tool's execution.taskSupport as the server listed
// it (TaskForbidden when it said nothing); tool is the server's name.
func (b *Bridge) TaskSupport(tool string) string {
	return taskSupportOn(b.current(), tool)
}

func taskSupportOn(c *conn, tool string) string {
	if c == nil || c.capture == nil {
		return tasks.Forbidden
	}
	if s := c.capture.toolTaskSupport(tool); s != "" {
		return s
	}
	return tasks.Forbidden
}

// serverTasks returns what the server said in initialize about tasks.
func (b *Bridge) serverTasks() taskCapabilities {
	c := b.current()
	if c == nil || c.capture == nil {
		return taskCapabilities{}
	}
	return c.capture.taskCaps()
}

// runsAsTask reports whether a call of the server's tool runs as a task
// under the server's "tasks" setting (mcpconfig.Server.Tasks).
func (b *Bridge) runsAsTask(tool string) bool {
	return b.runsAsTaskOn(b.current(), tool)
}

func (b *Bridge) runsAsTaskOn(c *conn, tool string) bool {
	switch taskSupportOn(c, tool) {
	case tasks.Required:
		return b.cfg.Tasks != mcpconfig.TasksNever
	case tasks.Optional:
		return (b.cfg.Tasks == "" || b.cfg.Tasks == mcpconfig.TasksAuto) && c.capture.taskCaps().ToolsCall
	}
	return false
}

// taskTool reports whether a tools/call takes the task path: the tool
// runs as a task, or requires one (and then fails with errTasksOff when
// tasks are off).
func (b *Bridge) taskTool(ctx context.Context, p *mcp.CallToolParams) bool {
	if p == nil {
		return false
	}
	return forcedTask(ctx) || b.runsAsTask(p.Name) || b.TaskSupport(p.Name) == tasks.Required
}

type statusHookKey struct{}

// WithTaskStatus returns a context under which every status report of a
// tool call that runs as a task (the same Progress the connection's
// WithProgress hook gets) also goes to f, with the call's ctx. It lets
// the one turn that made a call show its task's stages, where the
// connection's hook is shared by all turns. f must return quickly.
func WithTaskStatus(ctx context.Context, f func(context.Context, Progress)) context.Context {
	return context.WithValue(ctx, statusHookKey{}, f)
}

func taskStatusHook(ctx context.Context) func(context.Context, Progress) {
	f, _ := ctx.Value(statusHookKey{}).(func(context.Context, Progress))
	return f
}

type asTaskKey struct{}

// AsTask returns a context under which a tool call must run as a task
// (agentapp mcp call --task): a tool that allows tasks runs as one
// whatever the server's "tasks" setting, and a tool that does not fails
// without being called.
func AsTask(ctx context.Context) context.Context {
	return context.WithValue(ctx, asTaskKey{}, true)
}

func forcedTask(ctx context.Context) bool {
	v, _ := ctx.Value(asTaskKey{}).(bool)
	return v
}

// callTask is CallTool for a tool that runs as a task; the call is
// tracked already.
func (b *Bridge) callTask(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if forcedTask(ctx) && b.TaskSupport(p.Name) == tasks.Forbidden {
		return nil, &taskError{Server: b.name, Tool: p.Name, Err: errNoTasks,
			msg: fmt.Sprintf("tool %s was not called: server %s does not run it as a task (its tools/list gives it no execution.taskSupport)", p.Name, b.name)}
	}
	if !forcedTask(ctx) && !b.runsAsTask(p.Name) {
		return nil, &taskError{Server: b.name, Tool: p.Name, Err: errTasksOff,
			msg: fmt.Sprintf("tool %s was not called: it runs only as an MCP task and tasks are turned off for server %s; tell the user", p.Name, b.name)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, b.taskTimeout())
		defer cancel()
	}
	c, err := b.ready(ctx)
	if err != nil {
		return nil, err
	}
	p, retire := b.withProgressToken(p)
	defer retire()
	res, err := b.callToolAsTask(ctx, c, p)
	if err != nil {
		var te *taskError
		if !errors.As(err, &te) {
			err = b.callFailed(ctx, c, err)
		}
	}
	return res, err
}

// taskTimeout returns the bound of a call that runs as a task:
// mcpconfig.Server.TaskTimeout, or mcpconfig.DefaultTaskTimeout.
func (b *Bridge) taskTimeout() time.Duration {
	if b.cfg.TaskTimeout > 0 {
		return b.cfg.TaskTimeout
	}
	return mcpconfig.DefaultTaskTimeout
}

// ToolTimeout returns the bound of one call of the server's tool: the
// taskTimeout when it runs as a task, else the callTimeout.
func (b *Bridge) ToolTimeout(tool string) time.Duration {
	if b.runsAsTask(tool) {
		return b.taskTimeout()
	}
	return b.callTimeout()
}

// GetTask sends tasks/get.
func (b *Bridge) GetTask(ctx context.Context, id string) (*tasks.Task, error) {
	return taskRequest(ctx, b, "tasks/get", id)
}

// CancelTask sends tasks/cancel and returns the task's state after it.
func (b *Bridge) CancelTask(ctx context.Context, id string) (*tasks.Task, error) {
	return taskRequest(ctx, b, "tasks/cancel", id)
}

func taskRequest(ctx context.Context, b *Bridge, method, id string) (*tasks.Task, error) {
	return request(ctx, b, method+" "+strconv.Quote(id), func(ctx context.Context, s *mcp.ClientSession) (*tasks.Task, error) {
		return tasks.Get(ctx, s, method, id)
	})
}

// TaskResult sends tasks/result: it waits until the task ends and returns
// the tool's result. While it waits the server may send the requests the
// task needs answered (elicitation), which the bridge's handlers answer.
func (b *Bridge) TaskResult(ctx context.Context, id string) (*mcp.CallToolResult, error) {
	return request(ctx, b, "tasks/result "+strconv.Quote(id), func(ctx context.Context, s *mcp.ClientSession) (*mcp.CallToolResult, error) {
		return tasks.Result(ctx, s, id)
	})
}

// ListTasks sends tasks/list, all pages up to maxTaskList tasks.
func (b *Bridge) ListTasks(ctx context.Context) ([]*tasks.Task, error) {
	return request(ctx, b, "tasks/list", func(ctx context.Context, s *mcp.ClientSession) ([]*tasks.Task, error) {
		var all []*tasks.Task
		cursor := ""
		for {
			res, err := mcp.CallCustomMethod[*tasks.ListParams, *tasks.RawResult](ctx, s, "tasks/list", &tasks.ListParams{Cursor: cursor})
			if err != nil {
				return nil, err
			}
			var page struct {
				Tasks      []*tasks.Task `json:"tasks"`
				NextCursor string        `json:"nextCursor"`
			}
			if err := json.Unmarshal(res.Raw, &page); err != nil {
				return nil, fmt.Errorf("the server's answer to tasks/list is not a list of tasks: %v", err)
			}
			for _, t := range page.Tasks {
				if t != nil {
					all = append(all, t)
				}
			}
			if page.NextCursor == "" || page.NextCursor == cursor {
				return all, nil
			}
			if len(all) >= maxTaskList {
				return all[:maxTaskList], nil
			}
			cursor = page.NextCursor
		}
	})
}

// callToolAsTask runs one tools/call as a task on c: it creates the task,
// polls it until it ends (reporting each status change through the
// progress hook), fetches its result and returns it. A task has its own
// bound, the TTL the server gave it capped by TaskTimeout, instead of the
// call timeout. When ctx ends first the task is cancelled (tasks/cancel).
func (b *Bridge) callToolAsTask(ctx context.Context, c *conn, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	bound := b.taskTimeout()
	tp := &tasks.ToolCallParams{Name: p.Name, Arguments: p.Arguments, Task: tasks.Metadata{TTL: bound.Milliseconds()}}
	if len(p.Meta) > 0 {
		tp.Meta = p.Meta
	}
	created, err := mcp.CallCustomMethod[*tasks.ToolCallParams, *tasks.RawResult](ctx, c.session, tasks.CallMethod, tp)
	if err != nil {
		return nil, err
	}
	var cr struct {
		Task *tasks.Task `json:"task"`
	}
	if json.Unmarshal(created.Raw, &cr) != nil || cr.Task == nil || cr.Task.TaskID == "" {
		// The server ran the call at once (it may: the task was a
		// request, not an order).
		var r mcp.CallToolResult
		if err := json.Unmarshal(created.Raw, &r); err != nil {
			return nil, fmt.Errorf("the answer to a task-augmented tools/call is neither a task nor a tool result: %v", err)
		}
		return &r, nil
	}
	t := cr.Task
	if t.TTL != nil && *t.TTL > 0 {
		if ttl := time.Duration(*t.TTL) * time.Millisecond; ttl < bound {
			bound = ttl
		}
	}
	r := &taskRun{b: b, c: c, tool: p.Name, id: t.TaskID, bound: bound}
	return r.run(ctx, t)
}

// taskRun is one task being watched.
type taskRun struct {
	b     *Bridge
	c     *conn
	tool  string
	id    string
	bound time.Duration

	updates int
	last    string
}

type resultOrErr struct {
	res *mcp.CallToolResult
	err error
}

func (r *taskRun) fail(err error, format string, a ...any) error {
	return &taskError{Server: r.b.name, Tool: r.tool, TaskID: r.id, Err: err, msg: fmt.Sprintf(format, a...)}
}

func (r *taskRun) run(ctx context.Context, t *tasks.Task) (*mcp.CallToolResult, error) {
	tctx, cancel := context.WithTimeout(ctx, r.bound)
	defer cancel()
	var result chan resultOrErr // nil until tasks/result was sent
	fetch := func() {
		if result != nil {
			return
		}
		result = make(chan resultOrErr, 1)
		go func() {
			res, err := tasks.Result(tctx, r.c.session, r.id)
			result <- resultOrErr{res, err}
		}()
	}
	p := tasks.NewPace(tasks.PollInterval(t), nil)
	// A server that sends notifications/tasks/status (agentapp serve on
	// a stdio connection or an HTTP GET stream) ends the wait at once.
	var notified <-chan struct{}
	if r.c.capture != nil {
		var stop func()
		notified, stop = r.c.capture.status.Wait(r.id)
		defer stop()
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	if !timer.Stop() {
		<-timer.C
	}
	for {
		if r.report(ctx, t) {
			p.Changed()
		}
		switch {
		case t.Status == tasks.Cancelled:
			return nil, r.fail(nil, "tool %s ran as task %s on server %s, which cancelled it%s; it has no result", r.tool, r.id, r.b.name, because(t.StatusMessage))
		case t.Terminal(), t.Status == tasks.InputRequired:
			// tasks/result waits for the end and carries the requests the
			// task needs answered.
			fetch()
		}
		timer.Reset(p.Wait())
		select {
		case <-tctx.Done():
			r.cancelTask(ctx)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, r.fail(context.DeadlineExceeded, "tool %s ran as task %s on server %s for %s, its bound (the server's TTL for the task, capped by the config's \"taskTimeout\"), and was cancelled; ask the user whether to start it again", r.tool, r.id, r.b.name, r.bound)
		case got := <-result:
			if got.err != nil {
				if tctx.Err() != nil {
					continue // the select above words it
				}
				return nil, r.fail(got.err, "tool %s ran as task %s on server %s, and fetching its result failed: %s", r.tool, r.id, r.b.name, safeText(got.err))
			}
			return got.res, nil
		case <-timer.C:
		case <-notified:
		}
		nt, err := tasks.Get(tctx, r.c.session, "tasks/get", r.id)
		if err != nil {
			if tctx.Err() != nil {
				continue
			}
			if r.pollFailed(p, err) {
				r.cancelTask(ctx)
				return nil, r.fail(err, "tool %s ran as task %s on server %s, and asking for its state failed: %s; it was cancelled", r.tool, r.id, r.b.name, safeText(err))
			}
			continue
		}
		t = nt
		p.Polled(tasks.PollInterval(t))
	}
}

// pollFailed records a poll that failed and reports whether to give up:
// the server refused it, it failed too often in a row, or the connection
// is gone. Otherwise the next poll waits twice as long.
func (r *taskRun) pollFailed(p *tasks.Pace, err error) bool {
	if _, rejected := serverRejected(err); rejected || p.Failures()+1 >= maxPollFailures || !r.c.alive() {
		return true
	}
	p.Failed()
	return false
}

// report passes a new status or status message to the progress hook and
// reports whether there was one.
func (r *taskRun) report(ctx context.Context, t *tasks.Task) bool {
	key := t.Status + "\x00" + t.StatusMessage
	if key == r.last {
		return false
	}
	r.last = key
	r.updates++
	p := Progress{Server: r.b.name, Tool: r.tool, Progress: float64(r.updates), Task: r.id, Status: t.Status, Message: textsafe.Preview(t.StatusMessage, 200)}
	if r.b.opts.progress != nil {
		r.b.opts.progress(p)
	}
	if f := taskStatusHook(ctx); f != nil {
		f(ctx, p)
	}
	return true
}

// cancelTask sends tasks/cancel for an abandoned task, bounded and
// detached from the context that ended.
func (r *taskRun) cancelTask(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), taskCancelTimeout)
	defer cancel()
	if _, err := tasks.Get(cctx, r.c.session, "tasks/cancel", r.id); err != nil {
		r.b.opts.logger.Warn("mcp: cancelling an abandoned task failed; the server may run it to its end", "server", r.b.name, "tool", r.tool, "task", r.id, "error", safeText(err))
	}
}

func because(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + textsafe.Preview(msg, 200) + ")"
}

// taskOf returns the id of the task a tools/call result came from, if any.
func taskOf(res *mcp.CallToolResult) (string, bool) {
	if res == nil {
		return "", false
	}
	id, ok := res.Meta[tasks.MetaKey].(string)
	return id, ok
}

// errNoTasks is the cause when a call must run as a task (AsTask) and the
// tool does not run as one.
var errNoTasks = errors.New("the tool does not run as an MCP task")

// errTasksOff is the cause for a tool that requires a task on a server
// whose "tasks" setting is "never".
var errTasksOff = errors.New(`the tool runs only as an MCP task and the server's "tasks" setting is "never"`)

// taskRequired reports whether c says the tool requires a task (a
// *Bridge, or a caller that forwards to one and says so).
func taskRequired(c ToolCaller, tool string) bool {
	ts, ok := c.(interface{ TaskSupport(string) string })
	return ok && ts.TaskSupport(tool) == tasks.Required
}
