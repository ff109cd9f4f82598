package tasks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Tasks the other way (protocol 2025-11-25): a server may send us its
// sampling/createMessage or elicitation/create with params.task, when we
// said in initialize that we run those as tasks. We then answer at once
// with a task, run the request (the SDK's handler: the model, or the form
// put to the user) and let the server poll tasks/get, fetch tasks/result
// and send tasks/cancel.
//
// The SDK knows none of this, so it happens on the connection
// (captureConn, stdio and in-memory connections): the task request is
// handed to the SDK without params.task under an id of ours, the SDK's
// answer to that id is kept as the task's result instead of being sent,
// and the task methods are answered without the SDK. A tasks/cancel
// reaches the SDK's handler as notifications/cancelled for our id.

// Bounds of the tasks a server runs on us.
const (
	// maxRequestTasks caps the tasks a connection keeps; past it a task
	// request is refused with an error saying so.
	maxRequestTasks = 64
	// defaultRequestTaskTTL is a task's lifetime when the server asks for
	// none; requestTaskTTLCap caps what it may ask for.
	defaultRequestTaskTTL = 10 * time.Minute
	requestTaskTTLCap     = time.Hour
	// requestTaskPoll is the interval we suggest to the server.
	requestTaskPoll = time.Second
	// requestTaskIDPrefix starts the ids under which the SDK gets the
	// task requests: a string, so never one of the server's own integer
	// ids, and never one of the direct path's (directIDPrefix).
	requestTaskIDPrefix = "agentapp-task-"
)

// Requests are the tasks one connection runs for its server.
type Requests struct {
	sampling, elicitation bool // what we advertise

	mu     sync.Mutex
	tasks  map[string]*requestTask // by task id
	closed chan struct{}
	once   sync.Once
	now    func() time.Time
}

type requestTask struct {
	id, method   string
	status, msg  string
	created, upd time.Time
	ttl          time.Duration
	result       json.RawMessage
	rpcErr       *jsonrpc.Error
	done         chan struct{} // closed when the task ends
	sdkID        jsonrpc.ID    // the id the SDK got the request under
}

func NewRequests(sampling, elicitation bool) *Requests {
	if !sampling && !elicitation {
		return nil
	}
	return &Requests{sampling: sampling, elicitation: elicitation, tasks: map[string]*requestTask{}, closed: make(chan struct{}), now: time.Now}
}

// close ends the waits of tasks/result when the connection closes.
func (rt *Requests) Close() {
	if rt != nil {
		rt.once.Do(func() { close(rt.closed) })
	}
}

// capability is what initialize's capabilities.tasks says.
func (rt *Requests) capability() json.RawMessage {
	reqs := map[string]any{}
	if rt.sampling {
		reqs["sampling"] = map[string]any{"createMessage": struct{}{}}
	}
	if rt.elicitation {
		reqs["elicitation"] = map[string]any{"create": struct{}{}}
	}
	b, _ := json.Marshal(map[string]any{"list": struct{}{}, "cancel": struct{}{}, "requests": reqs})
	return b
}

// withCapability adds capabilities.tasks to the params of initialize.
func (rt *Requests) WithCapability(params json.RawMessage) (json.RawMessage, bool) {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return nil, false
	}
	caps := map[string]json.RawMessage{}
	if raw, ok := p["capabilities"]; ok && json.Unmarshal(raw, &caps) != nil {
		return nil, false
	}
	caps["tasks"] = rt.capability()
	var err error
	if p["capabilities"], err = json.Marshal(caps); err != nil {
		return nil, false
	}
	out, err := json.Marshal(p)
	return out, err == nil
}

// runsAsTask reports whether req is a request we run as a task.
func (rt *Requests) RunsAsTask(req *jsonrpc.Request) bool {
	switch req.Method {
	case "sampling/createMessage":
		return rt.sampling
	case "elicitation/create":
		return rt.elicitation
	}
	return false
}

// wireRequestTask is a task as we send it.
type wireRequestTask struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval"`
}

func (t *requestTask) wire() wireRequestTask {
	return wireRequestTask{
		TaskID: t.id, Status: t.status, StatusMessage: t.msg,
		CreatedAt:     t.created.UTC().Format(time.RFC3339Nano),
		LastUpdatedAt: t.upd.UTC().Format(time.RFC3339Nano),
		TTL:           t.ttl.Milliseconds(), PollInterval: requestTaskPoll.Milliseconds(),
	}
}

// start turns a task request of the server into a task: it returns the
// request to hand the SDK (params.task removed, our id) and the answer to
// send the server now (the task, or an error when no task can be made).
func (rt *Requests) Start(req *jsonrpc.Request) (forSDK *jsonrpc.Request, answer *jsonrpc.Response) {
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil {
		return nil, errorResponse(req.ID, jsonrpc.CodeInvalidParams, req.Method+": the params are not a JSON object")
	}
	var spec struct {
		TTL *float64 `json:"ttl"`
	}
	_ = json.Unmarshal(p["task"], &spec)
	delete(p, "task")
	params, err := json.Marshal(p)
	if err != nil {
		return nil, errorResponse(req.ID, jsonrpc.CodeInternalError, err.Error())
	}
	ttl := defaultRequestTaskTTL
	if spec.TTL != nil && *spec.TTL > 0 {
		ttl = min(time.Duration(*spec.TTL)*time.Millisecond, requestTaskTTLCap)
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	sdkID, err := jsonrpc.MakeID(requestTaskIDPrefix + id)
	if err != nil {
		return nil, errorResponse(req.ID, jsonrpc.CodeInternalError, err.Error())
	}
	now := rt.now()
	t := &requestTask{id: id, method: req.Method, status: Working, created: now, upd: now, ttl: ttl, done: make(chan struct{}), sdkID: sdkID}
	if req.Method == "elicitation/create" {
		t.status, t.msg = InputRequired, "waiting for the user's answer"
	}
	rt.mu.Lock()
	rt.expireLocked(now)
	if len(rt.tasks) >= maxRequestTasks {
		rt.mu.Unlock()
		return nil, errorResponse(req.ID, jsonrpc.CodeInternalError, fmt.Sprintf("the client runs %d tasks for this server already, its limit; wait for some to end or cancel them (tasks/cancel)", maxRequestTasks))
	}
	rt.tasks[id] = t
	w := t.wire()
	rt.mu.Unlock()
	res, _ := json.Marshal(map[string]any{"task": w})
	return &jsonrpc.Request{ID: sdkID, Method: req.Method, Params: params}, &jsonrpc.Response{ID: req.ID, Result: res}
}

// finish takes the SDK's answer to a task request; it reports whether
// resp was one (and so must not go to the server).
func (rt *Requests) Finish(resp *jsonrpc.Response) bool {
	s, ok := resp.ID.Raw().(string)
	if !ok || len(s) <= len(requestTaskIDPrefix) || s[:len(requestTaskIDPrefix)] != requestTaskIDPrefix {
		return false
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	t := rt.tasks[s[len(requestTaskIDPrefix):]]
	if t == nil {
		return true // expired meanwhile: nobody wants it
	}
	select {
	case <-t.done:
		return true // cancelled before the answer came
	default:
	}
	t.upd = rt.now()
	if resp.Error != nil {
		t.status, t.msg = Failed, resp.Error.Error()
		var we *jsonrpc.Error
		if errors.As(resp.Error, &we) {
			t.rpcErr = we
		} else {
			t.rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
		}
	} else {
		t.status, t.msg, t.result = Completed, "", resp.Result
	}
	close(t.done)
	return true
}

// expireLocked removes the tasks whose TTL has passed; rt.mu is held.
func (rt *Requests) expireLocked(now time.Time) {
	for id, t := range rt.tasks {
		if now.Sub(t.created) > t.ttl {
			delete(rt.tasks, id)
		}
	}
}

func (rt *Requests) get(id string) *requestTask {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.expireLocked(rt.now())
	return rt.tasks[id]
}

func noTask(id jsonrpc.ID, task string) *jsonrpc.Response {
	return errorResponse(id, jsonrpc.CodeInvalidParams, fmt.Sprintf("no task %q: the client has no such task (it may have expired: its TTL passed)", task))
}

// answer handles one of the task methods the server sends; it returns
// the response to send now (nil when it comes later, from tasks/result,
// through send) and, for tasks/cancel, the notification that cancels the
// SDK's handler.
func (rt *Requests) Answer(req *jsonrpc.Request, send func(*jsonrpc.Response)) (resp *jsonrpc.Response, cancelSDK *jsonrpc.Request) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if req.Method != "tasks/list" && (json.Unmarshal(req.Params, &p) != nil || p.TaskID == "") {
		return errorResponse(req.ID, jsonrpc.CodeInvalidParams, req.Method+" needs params.taskId"), nil
	}
	switch req.Method {
	case "tasks/get":
		t := rt.get(p.TaskID)
		if t == nil {
			return noTask(req.ID, p.TaskID), nil
		}
		rt.mu.Lock()
		w := t.wire()
		rt.mu.Unlock()
		return resultResponse(req.ID, w), nil
	case "tasks/list":
		rt.mu.Lock()
		rt.expireLocked(rt.now())
		list := make([]wireRequestTask, 0, len(rt.tasks))
		for _, t := range rt.tasks {
			list = append(list, t.wire())
		}
		rt.mu.Unlock()
		sort.Slice(list, func(i, j int) bool { return list[i].CreatedAt > list[j].CreatedAt })
		return resultResponse(req.ID, map[string]any{"tasks": list}), nil
	case "tasks/cancel":
		t := rt.get(p.TaskID)
		if t == nil {
			return noTask(req.ID, p.TaskID), nil
		}
		rt.mu.Lock()
		defer rt.mu.Unlock()
		select {
		case <-t.done:
			return errorResponse(req.ID, jsonrpc.CodeInvalidParams, fmt.Sprintf("task %q has ended (%s) and cannot be cancelled", t.id, t.status)), nil
		default:
		}
		t.status, t.msg, t.upd = Cancelled, "the server cancelled it", rt.now()
		close(t.done)
		params, _ := json.Marshal(map[string]any{"requestId": t.sdkID.Raw(), "reason": "the server cancelled the task"})
		return resultResponse(req.ID, t.wire()), &jsonrpc.Request{Method: "notifications/cancelled", Params: params}
	case "tasks/result":
		t := rt.get(p.TaskID)
		if t == nil {
			return noTask(req.ID, p.TaskID), nil
		}
		go func() {
			// Bounded by the task's TTL (capped) and the connection.
			wait := time.NewTimer(max(t.ttl-rt.now().Sub(t.created), 0))
			defer wait.Stop()
			select {
			case <-t.done:
				send(rt.result(req.ID, t))
			case <-wait.C:
				send(errorResponse(req.ID, jsonrpc.CodeInternalError, fmt.Sprintf("task %q did not end within its TTL (%s)", t.id, t.ttl)))
			case <-rt.closed:
			}
		}()
		return nil, nil
	}
	return errorResponse(req.ID, jsonrpc.CodeMethodNotFound, "unknown task method "+req.Method), nil
}

// result is tasks/result's answer for an ended task: the request's own
// result, tied to the task by _meta.
func (rt *Requests) result(id jsonrpc.ID, t *requestTask) *jsonrpc.Response {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	switch {
	case t.status == Cancelled:
		return errorResponse(id, jsonrpc.CodeInternalError, fmt.Sprintf("task %q was cancelled; it has no result", t.id))
	case t.rpcErr != nil:
		return &jsonrpc.Response{ID: id, Error: t.rpcErr}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t.result, &m) != nil || m == nil {
		return &jsonrpc.Response{ID: id, Result: t.result}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := m["_meta"]; ok {
		_ = json.Unmarshal(raw, &meta)
	}
	meta[relatedKey], _ = json.Marshal(map[string]string{"taskId": t.id})
	m["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(m)
	if err != nil {
		return &jsonrpc.Response{ID: id, Result: t.result}
	}
	return &jsonrpc.Response{ID: id, Result: out}
}

func resultResponse(id jsonrpc.ID, v any) *jsonrpc.Response {
	b, err := json.Marshal(v)
	if err != nil {
		return errorResponse(id, jsonrpc.CodeInternalError, err.Error())
	}
	return &jsonrpc.Response{ID: id, Result: b}
}

func errorResponse(id jsonrpc.ID, code int64, msg string) *jsonrpc.Response {
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: msg}}
}

// IsMethod reports whether a request of the server is one of the task
// methods we answer ourselves.
func IsMethod(m string) bool {
	return m == "tasks/get" || m == "tasks/result" || m == "tasks/list" || m == "tasks/cancel"
}

// HasTask reports whether params has a "task" member.
func HasTask(params json.RawMessage) bool {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	_, ok := p["task"]
	return ok
}

// WriteDetached writes msg on conn within a bound, apart from any request's
// context (an answer must go out even when the read that caused it ended).
func WriteDetached(conn interface {
	Write(context.Context, jsonrpc.Message) error
}, msg jsonrpc.Message) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return conn.Write(ctx, msg)
}
