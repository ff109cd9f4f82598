package mcpserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/trust"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tasks (MCP 2025-11-25, experimental) on the server side: a tools/call
// with params.task for a tool the TaskBackend runs answers at once with a
// task, which the caller polls (tasks/get), lists, fetches (tasks/result)
// or cancels. The backend keeps the tasks (agentapp's in the database, so
// they outlive the process and any replica answers for them).
//
// The Go SDK knows nothing of tasks: its CallToolParams drop "task", its
// capabilities have no "tasks" and its tools no "execution". So the
// transports move params.task into params._meta[taskMetaKey] before the
// SDK decodes the request (liftTask), the task methods are custom methods,
// and the middleware answers a task call itself and adds the capability and
// each task tool's execution.taskSupport to what the SDK sends.
//
// A task belongs to its caller, and only the caller can read or cancel
// it. The caller is the bearer token (its SHA-256: the same token on any
// replica, any session) when the request came with one, else the MCP
// session (stdio: the connection; stateful HTTP: Mcp-Session-Id). A
// request with neither (stateless HTTP without a token) has no caller
// that could come back, so its task calls run as plain calls.

// taskMetaKey is where liftTask puts a request's params.task.
const taskMetaKey = "agentapp/task"

// relatedTaskKey is the _meta key that ties a result to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// Bounds of a task's lifetime (TTL) as a client may ask for it.
const (
	DefaultTaskTTL = 24 * time.Hour
	MinTaskTTL     = time.Minute
	MaxTaskTTL     = 7 * 24 * time.Hour
)

// taskResultWait bounds one tasks/result: it waits for the task to end,
// polling the backend, and a task that waits for a person may take days.
// After it the client gets an error telling it to ask again.
const taskResultWait = 5 * time.Minute

// ErrNoTask is what a TaskBackend returns for a task the caller cannot
// see: unknown, expired, or another caller's.
var ErrNoTask = errors.New("no such task")

// ErrTaskEnded is what a TaskBackend returns for cancelling a task that
// has ended.
var ErrTaskEnded = errors.New("the task has ended")

// Task is a task as a TaskBackend reports it.
type Task struct {
	ID            string
	Status        string // working, input_required, completed, failed, cancelled
	StatusMessage string
	Created       time.Time
	Updated       time.Time
	TTL           time.Duration
	PollInterval  time.Duration
	// Output is the tool's output once the task is completed, encoded
	// like a plain call's output.
	Output any
	// ToolError, set on a completed task, is the tool's own failure: the
	// result is an isError result with this text instead of Output.
	ToolError string
	// Failure, set on a failed task, is the protocol-level error that
	// ended it (the tasks extension inlines it as the task's error).
	Failure *jsonrpc.Error
	// InputRequests, on an input_required task, are the requests still
	// waiting for the client's answer, keyed by ids the backend mints
	// (the extension's inputRequests; answers come by tasks/update).
	InputRequests mcp.InputRequestMap
}

func (t *Task) terminal() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// TaskWaiter is a TaskBackend that can tell a blocking tasks/result when
// its tasks may have changed: WaitChange returns then, or after d, or when
// ctx ends.
type TaskWaiter interface {
	WaitChange(ctx context.Context, d time.Duration)
}

// TaskBackend runs some tools as tasks and keeps the tasks.
type TaskBackend interface {
	// TaskTools names the tools that may run as tasks (taskSupport
	// "optional": without a task they run as plain calls).
	TaskTools() []string
	// StartTask starts tool as a task of caller, kept for ttl. args are
	// checked against the tool's schema already.
	StartTask(ctx context.Context, caller, tool string, args json.RawMessage, ttl time.Duration) (*Task, error)
	// Task returns caller's task id, or ErrNoTask.
	Task(ctx context.Context, caller, id string) (*Task, error)
	// Tasks lists caller's tasks, newest first, a bounded number.
	Tasks(ctx context.Context, caller string) ([]*Task, error)
	// CancelTask cancels caller's task id: ErrNoTask, ErrTaskEnded.
	CancelTask(ctx context.Context, caller, id string) (*Task, error)
}

// TaskAnswerer is a TaskBackend whose tasks may wait for input from the
// client (status input_required, Task.InputRequests).
type TaskAnswerer interface {
	// AnswerTask hands caller's task id the responses, keyed as its
	// InputRequests; a key not outstanding is ignored. ErrNoTask.
	AnswerTask(ctx context.Context, caller, id string, responses map[string]json.RawMessage) error
}

// TaskRounds is a TaskBackend some of whose task tools first gather input
// in input-required rounds (SEP-2322) and make the task on the last one.
type TaskRounds interface {
	// TaskRound is asked, for a tools/call of the tasks extension, before
	// the task is made. Input requests (non-nil) answer the call as an
	// input-required result, with state as its requestState; otherwise
	// the task starts with args (nil: the call's own).
	TaskRound(ctx context.Context, req *mcp.CallToolRequest) (ask mcp.InputRequestMap, state string, args json.RawMessage, err error)
}

// TaskPager is a TaskBackend that lists tasks a page at a time, as every
// MCP list pages: tasks/list then passes the client's cursor on and
// answers nextCursor while there is more.
type TaskPager interface {
	// TasksPage returns a page of caller's tasks, newest first, from
	// cursor ("" for the first page), and the cursor of the next page
	// ("" after the last). A cursor it did not hand out is ErrBadCursor.
	TasksPage(ctx context.Context, caller, cursor string) (tasks []*Task, next string, err error)
}

// ErrBadCursor is what a TaskPager returns for a cursor it did not issue.
var ErrBadCursor = errors.New("invalid cursor")

// wireTask is a task on the wire.
type wireTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func toWire(t *Task) wireTask {
	w := wireTask{
		TaskID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt:     t.Created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.Updated.UTC().Format(time.RFC3339Nano),
		PollInterval:  t.PollInterval.Milliseconds(),
	}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		w.TTL = &ms
	}
	return w
}

// createTaskResult is the answer of a task-augmented tools/call.
type createTaskResult struct {
	mcp.ResultBase
	Task wireTask `json:"task"`
}

type listTasksResult struct {
	mcp.ResultBase
	Tasks      []wireTask `json:"tasks"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

type taskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type listTasksParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// rawJSONResult sends bytes as they are.
type rawJSONResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawJSONResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

type callerKey struct{}

// CallerFrom returns the caller of the request ctx belongs to (see the
// tasks comment above), "" when it has none. Tools read it to tell whose
// records they keep.
func CallerFrom(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// callerOf names the caller of req.
func (s *Server) callerOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil {
		if ex.TokenInfo != nil && ex.TokenInfo.UserID != "" {
			return "user:" + ex.TokenInfo.UserID
		}
		if c := tokenCaller(ex.Header); c != "" {
			return c
		}
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil || ss.ID() == "" && s.statelessHTTP(req) {
		return ""
	}
	return s.sessions.of(ss)
}

// tokenCaller names the caller of an HTTP request by its bearer token, or
// returns "" if it has none.
func tokenCaller(h http.Header) string {
	// The header is read as the token check reads it (any case of
	// "Bearer"), so that every client let in is named by its token.
	if tok, ok := trust.BearerToken(h.Get("Authorization")); ok {
		sum := sha256.Sum256([]byte(tok))
		return "token:" + hex.EncodeToString(sum[:16])
	}
	return ""
}

// headerCaller is callerOf for a request on the HTTP direct path
// (httpdirect.go), which has no token info: the bearer token, else the
// session (toolSession, as sessionIDs names it).
func headerCaller(h http.Header, toolSession string) string {
	if c := tokenCaller(h); c != "" {
		return c
	}
	return toolSession
}

// statelessHTTP reports whether req came over HTTP without a session.
func (s *Server) statelessHTTP(req mcp.Request) bool {
	ex := req.GetExtra()
	return ex != nil && ex.Header != nil
}

// installTasks makes the server run b's tools as tasks.
func (s *Server) installTasks(b TaskBackend) []mcp.Middleware {
	s.tasks = b
	s.taskTools = map[string]bool{}
	for _, name := range b.TaskTools() {
		if s.tools[name] != nil {
			s.taskTools[name] = true
		}
	}
	s.requiredTasks = map[string]bool{}
	if rb, ok := b.(RequiredTaskBackend); ok {
		for _, name := range rb.RequiredTaskTools() {
			if s.taskTools[name] {
				s.requiredTasks[name] = true
			}
		}
	}
	// tasks/get and tasks/cancel answer in the shape of the generation the
	// request speaks: the extension's when it declares it (tasks_ext.go).
	_ = mcp.AddReceivingCustomMethod(s.mcp, "tasks/get", func(ctx context.Context, _ *mcp.ServerSession, p *taskIDParams) (*extResult, error) {
		if err := extGate("tasks/get", metaOf(p)); err != nil {
			return nil, err
		}
		if p != nil && extAsked(p.Meta) {
			res, err := s.extGet(ctx, p)
			if err != nil {
				return nil, err
			}
			return res.(*extResult), nil
		}
		t, err := s.taskOf(ctx, p)
		if err != nil {
			return nil, err
		}
		return &extResult{v: toWire(t)}, nil
	})
	_ = mcp.AddReceivingCustomMethod(s.mcp, "tasks/cancel", func(ctx context.Context, _ *mcp.ServerSession, p *taskIDParams) (*extResult, error) {
		if err := extGate("tasks/cancel", metaOf(p)); err != nil {
			return nil, err
		}
		if p == nil || p.TaskID == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tasks/cancel needs params.taskId"}
		}
		ext := extAsked(p.Meta)
		t, err := b.CancelTask(ctx, CallerFrom(ctx), p.TaskID)
		switch {
		case ext && errors.Is(err, ErrTaskEnded):
			// Cancelling is a wish under the extension: the task ended
			// first, which tasks/get shows.
			return &extResult{v: ack}, nil
		case err != nil:
			return nil, taskError(p.TaskID, err)
		case ext:
			return &extResult{v: ack}, nil
		}
		return &extResult{v: toWire(t)}, nil
	})
	s.installExtTasks()
	_ = mcp.AddReceivingCustomMethod(s.mcp, "tasks/list", func(ctx context.Context, _ *mcp.ServerSession, p *listTasksParams) (*listTasksResult, error) {
		if err := extGate("tasks/list", metaOf(p)); err != nil {
			return nil, err
		}
		var (
			ts   []*Task
			next string
			err  error
		)
		if pager, ok := b.(TaskPager); ok {
			cursor := ""
			if p != nil {
				cursor = p.Cursor
			}
			ts, next, err = pager.TasksPage(ctx, CallerFrom(ctx), cursor)
			if errors.Is(err, ErrBadCursor) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tasks/list: the cursor is not one this server handed out; start again without one"}
			}
		} else {
			ts, err = b.Tasks(ctx, CallerFrom(ctx))
		}
		if err != nil {
			return nil, backendError(err)
		}
		res := &listTasksResult{Tasks: []wireTask{}, NextCursor: next}
		for _, t := range ts {
			res.Tasks = append(res.Tasks, toWire(t))
		}
		return res, nil
	})
	_ = mcp.AddReceivingCustomMethod(s.mcp, "tasks/result", func(ctx context.Context, _ *mcp.ServerSession, p *taskIDParams) (*rawJSONResult, error) {
		if err := extGate("tasks/result", metaOf(p)); err != nil {
			return nil, err
		}
		return s.awaitTaskResult(ctx, p)
	})
	return []mcp.Middleware{s.taskMiddleware}
}

func (s *Server) taskOf(ctx context.Context, p *taskIDParams) (*Task, error) {
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the request needs params.taskId"}
	}
	t, err := s.tasks.Task(ctx, CallerFrom(ctx), p.TaskID)
	if err != nil {
		return nil, taskError(p.TaskID, err)
	}
	return t, nil
}

// taskError turns a backend error into what the client gets.
func taskError(id string, err error) error {
	switch {
	case errors.Is(err, ErrNoTask):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no task %q: it does not exist, has expired (its TTL passed), or belongs to another caller", id)}
	case errors.Is(err, ErrTaskEnded):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q has ended and cannot be cancelled", id)}
	}
	return backendError(err)
}

// backendError gives a backend's failure a JSON-RPC code (a plain error
// went out with code 0, which no client can act on): an outage (an error
// with an Unavailable method, as the store's are) is codeBusy with the
// outage's own message, which says to try again; anything else is an
// internal error.
func backendError(err error) error {
	var rpcErr *jsonrpc.Error
	if err == nil || errors.As(err, &rpcErr) {
		return err
	}
	var u interface {
		error
		Unavailable() bool
	}
	if errors.As(err, &u) && u.Unavailable() {
		return &jsonrpc.Error{Code: codeBusy, Message: u.Error()}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// awaitTaskResult answers tasks/result: the tool's result once the task
// has ended, waiting (within taskResultWait) while it works.
func (s *Server) awaitTaskResult(ctx context.Context, p *taskIDParams) (*rawJSONResult, error) {
	deadline := time.NewTimer(taskResultWait)
	defer deadline.Stop()
	for {
		t, err := s.taskOf(ctx, p)
		if err != nil {
			return nil, err
		}
		if t.terminal() {
			var res *mcp.CallToolResult
			switch t.Status {
			case "completed":
				res = successResult("task "+t.ID, t.Output)
				if t.ToolError != "" {
					res = errorResult(t.ToolError)
				}
			default:
				res = errorResult(fmt.Sprintf("the task was %s: %s", t.Status, t.StatusMessage))
			}
			res.Meta = mcp.Meta{relatedTaskKey: map[string]any{"taskId": t.ID}}
			raw, err := json.Marshal(res)
			if err != nil {
				return nil, err
			}
			return &rawJSONResult{raw: raw}, nil
		}
		wait := min(max(t.PollInterval, 200*time.Millisecond), 5*time.Second)
		if w, ok := s.tasks.(TaskWaiter); ok {
			// Wake on the change (a decision made by another process)
			// rather than at the next poll.
			w.WaitChange(ctx, wait)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			select {
			case <-deadline.C:
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q is still %s (%s) after %s; poll tasks/get and ask for the result again later", t.ID, t.Status, t.StatusMessage, taskResultWait)}
			default:
			}
			continue
		}
		tick := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			tick.Stop()
			return nil, ctx.Err()
		case <-deadline.C:
			tick.Stop()
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %q is still %s (%s) after %s; poll tasks/get and ask for the result again later", t.ID, t.Status, t.StatusMessage, taskResultWait)}
		case <-tick.C:
		}
	}
}

// taskMiddleware names the caller of every request, answers task-augmented
// tools/call itself, and adds tasks to what initialize and tools/list say.
func (s *Server) taskMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if c := s.callerOf(req); c != "" {
			ctx = context.WithValue(ctx, callerKey{}, c)
		}
		switch method {
		case "tools/call":
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				// At 2026-07-28 a params.task is a leftover of the older
				// generation, ignored: the extension has the server decide.
				if ttl, asked := taskAsked(r.Params.Meta); asked && !atNextGen(r.Params.Meta) {
					return s.startTask(ctx, r, ttl, next)
				}
				// The extension: the server decides, for a client that
				// declared it and a caller that can come back.
				if s.taskTools[r.Params.Name] && CallerFrom(ctx) != "" && extAsked(r.Params.Meta) {
					return s.startExtTask(agent.WithSession(ctx, s.sessions.of(r.Session)), r)
				}
				if s.requiredTasks[r.Params.Name] {
					return nil, requiredTaskError(r.Params.Name)
				}
			}
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil {
				return &withTasksCapability{InitializeResult: ir}, nil
			}
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				return &withTaskSupport{ListToolsResult: lr, tasks: s.taskTools, required: s.requiredTasks}, nil
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

// taskAsked reports whether a tools/call asked for a task, and the TTL it
// asked for (0: the default).
func taskAsked(meta mcp.Meta) (time.Duration, bool) {
	v, ok := meta[taskMetaKey]
	if !ok {
		return 0, false
	}
	m, _ := v.(map[string]any)
	ttl, _ := m["ttl"].(float64)
	return time.Duration(ttl) * time.Millisecond, true
}

func (s *Server) startTask(ctx context.Context, r *mcp.CallToolRequest, ttl time.Duration, next mcp.MethodHandler) (mcp.Result, error) {
	name := r.Params.Name
	if !s.taskTools[name] {
		if s.tools[name] == nil {
			return next(ctx, "tools/call", r) // the SDK's unknown-tool error
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %s does not run as a task (its execution.taskSupport is forbidden); call it without params.task", name)}
	}
	caller := CallerFrom(ctx)
	if caller == "" {
		// No one could come back for the task: answer at once.
		return next(ctx, "tools/call", r)
	}
	switch {
	case ttl <= 0:
		ttl = DefaultTaskTTL
	case ttl < MinTaskTTL:
		ttl = MinTaskTTL
	case ttl > MaxTaskTTL:
		ttl = MaxTaskTTL
	}
	args := r.Params.Arguments
	if err := s.tools[name].CheckArgs(args); err != nil {
		return errorResult(err.Error()), nil
	}
	cctx := agent.WithSession(ctx, s.sessions.of(r.Session))
	t, err := s.tasks.StartTask(cctx, caller, name, args, ttl)
	if err != nil {
		return errorResult(fmt.Sprintf("%s failed: %v", name, err)), nil
	}
	if ss := r.Session; ss != nil && ss.ID() != "" {
		s.watchTask("mcp:"+ss.ID(), caller, t)
	}
	return &createTaskResult{Task: toWire(t)}, nil
}

// withTasksCapability is an initialize result that also declares tasks.
// The SDK's bytes are kept (key order, escaping); the capability is
// spliced in.
type withTasksCapability struct {
	*mcp.InitializeResult
}

func (r *withTasksCapability) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(r.InitializeResult)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	caps, ok := m["capabilities"]
	if !ok {
		return b, nil
	}
	return bytes.Replace(b, caps, prependMember(caps, `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`), 1), nil
}

// marshalNoEscape encodes v as the SDK does: "<", ">" and "&" as they are.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// prependMember puts member first in the JSON object obj.
func prependMember(obj json.RawMessage, member string) json.RawMessage {
	rest := bytes.TrimSpace(obj[1:])
	out := make([]byte, 0, len(obj)+len(member)+2)
	out = append(out, '{')
	out = append(out, member...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// withTaskSupport is a tools/list result whose task tools say so.
type withTaskSupport struct {
	*mcp.ListToolsResult
	tasks, required map[string]bool
}

func (r *withTaskSupport) MarshalJSON() ([]byte, error) {
	b, err := marshalNoEscape(r.ListToolsResult)
	if err != nil || len(r.tasks) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(m["tools"], &tools); err != nil {
		return b, nil
	}
	for _, t := range tools {
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(t, &named) == nil && r.tasks[named.Name] {
			support := "optional"
			if r.required[named.Name] {
				support = "required"
			}
			b = bytes.Replace(b, t, prependMember(t, `"execution":{"taskSupport":"`+support+`"}`), 1)
		}
	}
	return b, nil
}

// liftTask moves the params.task of a tools/call request into
// params._meta[taskMetaKey], where the SDK keeps it; other messages are
// returned as they are.
func liftTask(msg jsonrpc.Message) jsonrpc.Message {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !bytes.Contains(req.Params, []byte(`"task"`)) {
		return msg
	}
	if p, ok := liftTaskParams(req.Params); ok {
		cp := *req
		cp.Params = p
		return &cp
	}
	return msg
}

func liftTaskParams(params json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return nil, false
	}
	task, ok := m["task"]
	if !ok {
		return nil, false
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return nil, false
	}
	if bytes.Equal(bytes.TrimSpace(task), []byte("null")) {
		task = json.RawMessage(`{}`)
	}
	meta[taskMetaKey] = task
	delete(m, "task")
	var err error
	if m["_meta"], err = json.Marshal(meta); err != nil {
		return nil, false
	}
	out, err := json.Marshal(m)
	return out, err == nil
}

// liftTaskBody does liftTask on an HTTP body: one message or a batch.
func liftTaskBody(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"task"`)) || !bytes.Contains(body, []byte(`tools/call`)) {
		return body
	}
	lift := func(raw json.RawMessage) json.RawMessage {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil || string(m["method"]) != `"tools/call"` {
			return raw
		}
		p, ok := liftTaskParams(m["params"])
		if !ok {
			return raw
		}
		m["params"] = p
		out, err := json.Marshal(m)
		if err != nil {
			return raw
		}
		return out
	}
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		var elems []json.RawMessage
		if json.Unmarshal(t, &elems) != nil {
			return body
		}
		for i, e := range elems {
			elems[i] = lift(e)
		}
		out, err := json.Marshal(elems)
		if err != nil {
			return body
		}
		return out
	}
	return lift(t)
}
