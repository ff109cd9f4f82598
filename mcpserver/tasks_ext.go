package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tasks extension of protocol 2026-07-28 (io.modelcontextprotocol/tasks)
// on the server side. A client declares it in the capabilities it sends
// with each request (_meta[mcp.MetaKeyClientCapabilities].extensions), and
// the server decides: a tools/call of a task tool from such a client,
// with a caller to own it, answers at once with the task itself
// (resultType "task"). The client polls tasks/get, which carries the
// tool's result once the task is completed (there is no tasks/result),
// answers input through tasks/update, and cancels with tasks/cancel, whose
// answer is an empty acknowledgement.
//
// The tasks are the backend's, the same as the 2025-11-25 generation's
// (tasks.go); only the shapes on the wire differ.

// ExtTasks is the identifier of the tasks extension.
const ExtTasks = "io.modelcontextprotocol/tasks"

// codeMissingCapability is the JSON-RPC error of a request that needs a
// client capability the client did not declare.
const codeMissingCapability = -32021

// extAsked reports whether a request's _meta declares the tasks extension
// among the client's capabilities.
func extAsked(meta mcp.Meta) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	if caps == nil {
		// Decoded by the SDK into its own type on some paths.
		if raw, err := json.Marshal(meta[mcp.MetaKeyClientCapabilities]); err == nil {
			_ = json.Unmarshal(raw, &caps)
		}
	}
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[ExtTasks]
	return ok
}

// extTask is a task on the wire of the extension: the task's fields at the
// top level, with the tool's result once it is completed.
type extTask struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
}

func toExt(t *Task, resultType string) (*extTask, error) {
	w := toWire(t)
	e := &extTask{ResultType: resultType, TaskID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt, TTLMs: w.TTL, PollIntervalMs: w.PollInterval}
	if t.Status == "failed" && t.Failure != nil {
		e.Error = t.Failure
	}
	if t.Status == "completed" {
		res := successResult("task "+t.ID, t.Output)
		if t.ToolError != "" {
			res = errorResult(t.ToolError)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		e.Result = raw
	}
	return e, nil
}

// extResult sends an extension shape as it is.
type extResult struct {
	mcp.ResultBase
	v any
}

func (r *extResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.v) }

// ack is the empty acknowledgement of tasks/update and tasks/cancel.
var ack = map[string]string{"resultType": "complete"}

type updateTaskParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// startExtTask answers a tools/call of a task tool from a client that
// declared the extension: the task, created in the backend before the
// answer (so that a tasks/get for it resolves on any replica).
func (s *Server) startExtTask(ctx context.Context, r *mcp.CallToolRequest) (mcp.Result, error) {
	name := r.Params.Name
	if err := s.tools[name].CheckArgs(r.Params.Arguments); err != nil {
		return errorResult(err.Error()), nil
	}
	t, err := s.tasks.StartTask(ctx, CallerFrom(ctx), name, r.Params.Arguments, DefaultTaskTTL)
	if err != nil {
		return errorResult(fmt.Sprintf("%s failed: %v", name, err)), nil
	}
	e, err := toExt(t, "task")
	if err != nil {
		return nil, err
	}
	return &extResult{v: e}, nil
}

// extGet is tasks/get for a client of the extension.
func (s *Server) extGet(ctx context.Context, p *taskIDParams) (mcp.Result, error) {
	t, err := s.taskOf(ctx, p)
	if err != nil {
		return nil, err
	}
	e, err := toExt(t, "complete")
	if err != nil {
		return nil, err
	}
	return &extResult{v: e}, nil
}

// installExtTasks adds the extension's tasks/update; tasks/get and
// tasks/cancel are shared with the 2025-11-25 generation and answer in
// the shape the request asks for (extAsked).
func (s *Server) installExtTasks() {
	_ = mcp.AddReceivingCustomMethod(s.mcp, "tasks/update", func(ctx context.Context, _ *mcp.ServerSession, p *updateTaskParams) (*extResult, error) {
		if p == nil || !extAsked(p.Meta) {
			return nil, &jsonrpc.Error{Code: codeMissingCapability, Message: "tasks/update belongs to the tasks extension: declare " + ExtTasks + " in the request's client capabilities",
				Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + ExtTasks + `":{}}}}`)}
		}
		if p.TaskID == "" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tasks/update needs params.taskId"}
		}
		if _, err := s.tasks.Task(ctx, CallerFrom(ctx), p.TaskID); err != nil {
			return nil, taskError(p.TaskID, err)
		}
		// Our tasks ask for no input (a person decides in the operator
		// view), so no response is outstanding: each is ignored, as the
		// extension asks of responses to keys not outstanding.
		return &extResult{v: ack}, nil
	})
}

// extGate holds a tasks/* request of protocol 2026-07-28 or later (its
// _meta says so) to the extension: tasks/list and tasks/result do not
// exist there (method not found), and the other methods need the
// extension declared in the request's client capabilities. Requests of
// 2025-11-25 sessions pass.
func extGate(method string, meta mcp.Meta) error {
	if !atNextGen(meta) {
		return nil
	}
	switch {
	case method == "tasks/list" || method == "tasks/result":
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %s is not part of protocol 2026-07-28 (the tasks extension has tasks/get, tasks/update and tasks/cancel)", method)}
	case !extAsked(meta):
		return &jsonrpc.Error{Code: codeMissingCapability, Message: method + " belongs to the tasks extension: declare " + ExtTasks + " in the request's client capabilities",
			Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + ExtTasks + `":{}}}}`)}
	}
	return nil
}

// metaOf is the _meta of task params that may be nil.
func metaOf[P *taskIDParams | *listTasksParams](p P) mcp.Meta {
	switch v := any(p).(type) {
	case *taskIDParams:
		if v != nil {
			return v.Meta
		}
	case *listTasksParams:
		if v != nil {
			return v.Meta
		}
	}
	return nil
}

// RequiredTaskBackend is a TaskBackend some of whose tools run only as
// tasks (taskSupport "required"): a call of one that is not a task is
// refused with -32021, naming the tasks extension.
type RequiredTaskBackend interface {
	TaskBackend
	RequiredTaskTools() []string
}

func requiredTaskError(tool string) error {
	return &jsonrpc.Error{Code: codeMissingCapability,
		Message: "tool " + tool + " runs only as a task: declare " + ExtTasks + " in the request's client capabilities (protocol 2026-07-28), or ask for a task (params.task)",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + ExtTasks + `":{}}}}`)}
}

// atNextGen reports whether a request's _meta says protocol 2026-07-28 or
// later.
func atNextGen(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= nextProtocolVersion
}
