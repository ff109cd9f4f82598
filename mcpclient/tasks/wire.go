// Package tasks is the wire side of MCP tasks for mcpclient: the task
// methods, their parameters and results, and the tasks a server runs on
// us (Requests). The bridge's polling and its hooks stay in mcpclient.
//
// Tasks (protocol 2025-11-25, experimental): a tool that takes minutes or
// waits for a person answers tools/call at once with a task; the client
// polls tasks/get, shows each status message, answers the input the task
// asks for (the server sends its elicitation/create while tasks/result is
// pending) and fetches the result with tasks/result. Cancelling the call
// sends tasks/cancel.
//
// The Go SDK knows none of this: CallToolParams has no "task" field and a
// CallToolResult decode drops the "task" of the answer. So the task
// methods are custom methods of the SDK's client, and the task-augmented
// tools/call is sent under an alias of ours (CallMethod) that the
// connection wrapper (captureConn on stdio, headerTransport over HTTP)
// renames on the wire; the SDK matches the answer by id and decodes it
// into our raw result.
package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The values of a tool's execution.taskSupport.
const (
	Forbidden = "forbidden"
	Optional  = "optional"
	Required  = "required"
)

// The statuses of a task.
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// relatedKey is the _meta key that ties a message to a task.
const relatedKey = "io.modelcontextprotocol/related-task"

// MetaKey is the _meta key under which the bridge marks a tools/call
// result that came from a task (its id), so the adapter words its errors
// for a task and not for a plain call.
const MetaKey = "agentapp/task"

// CallMethod is the alias the bridge sends a task-augmented tools/call
// under; the connection wrapper renames it to tools/call.
const CallMethod = "agentapp/task-augmented/tools/call"

// Task is the state of one task as the server reports it.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt,omitempty"`
	LastUpdatedAt string `json:"lastUpdatedAt,omitempty"`
	// TTL is how long (ms) the server keeps the task after it was
	// created; nil: for ever.
	TTL *float64 `json:"ttl"`
	// PollInterval is the server's advice (ms) on how often to poll.
	PollInterval float64 `json:"pollInterval,omitempty"`
}

// Terminal reports whether the task's status can no longer change.
func (t *Task) Terminal() bool {
	return t.Status == Completed || t.Status == Failed || t.Status == Cancelled
}

// IDParams are the params of tasks/get, tasks/result and tasks/cancel.
type IDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type ListParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// ToolCallParams are the params of a task-augmented tools/call.
type ToolCallParams struct {
	mcp.ParamsBase
	Name      string   `json:"name"`
	Arguments any      `json:"arguments,omitempty"`
	Task      Metadata `json:"task"`
}

type Metadata struct {
	TTL int64 `json:"ttl,omitempty"`
}

// RawResult keeps an answer as the server sent it.
type RawResult struct {
	mcp.ResultBase
	Raw json.RawMessage
}

func (r *RawResult) UnmarshalJSON(b []byte) error {
	r.Raw = append(json.RawMessage(nil), b...)
	return nil
}

func (r *RawResult) MarshalJSON() ([]byte, error) {
	if len(r.Raw) == 0 {
		return []byte("{}"), nil
	}
	return r.Raw, nil
}

// RegisterMethods lets client send the task methods.
func RegisterMethods(client *mcp.Client) {
	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_ = mcp.AddSendingCustomMethod[*IDParams, *RawResult](client, m)
	}
	_ = mcp.AddSendingCustomMethod[*ListParams, *RawResult](client, "tasks/list")
	_ = mcp.AddSendingCustomMethod[*ToolCallParams, *RawResult](client, CallMethod)
	registerExtMethods(client)
}

// RenameCall gives a message sent under CallMethod its real name.
func RenameCall(msg jsonrpc.Message) jsonrpc.Message {
	if req, ok := msg.(*jsonrpc.Request); ok && (req.Method == CallMethod || req.Method == ExtCallMethod) {
		cp := *req
		cp.Method = "tools/call"
		return &cp
	}
	return msg
}

// RenameCallHTTP does RenameCall on a POST body the SDK encoded,
// and gives the requests of protocol 2026-07-28 (which carry Mcp-Method)
// the Mcp-Name header the SDK sets only for the methods it knows: the
// tool's name on a renamed tools/call, the task's id on the extension's
// task methods (the extension of protocol 2026-07-28), by which a load balancer routes them.
func RenameCallHTTP(req *http.Request, method string) {
	modern := req.Header.Get("Mcp-Method") != ""
	if modern && (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") && req.GetBody != nil {
		if p := peekParams(req); p.TaskID != "" {
			req.Header.Set("Mcp-Name", p.TaskID)
		}
	}
	if method != CallMethod && method != ExtCallMethod || req.GetBody == nil {
		return
	}
	if modern {
		if p := peekParams(req); p.Name != "" {
			req.Header.Set("Mcp-Name", p.Name)
		}
	}
	body, err := req.GetBody()
	if err != nil {
		return
	}
	defer body.Close()
	var m map[string]json.RawMessage
	if json.NewDecoder(io.LimitReader(body, 64<<20)).Decode(&m) != nil {
		return
	}
	m["method"] = json.RawMessage(`"tools/call"`)
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	if req.Header.Get("Mcp-Method") != "" {
		req.Header.Set("Mcp-Method", "tools/call")
	}
}

// peekParams reads the name and taskId of a POST body's params.
func peekParams(req *http.Request) (p struct {
	Name   string `json:"name"`
	TaskID string `json:"taskId"`
}) {
	body, err := req.GetBody()
	if err != nil {
		return p
	}
	defer body.Close()
	var m struct {
		Params json.RawMessage `json:"params"`
	}
	if json.NewDecoder(io.LimitReader(body, 64<<20)).Decode(&m) == nil {
		_ = json.Unmarshal(m.Params, &p)
	}
	return p
}

func Get(ctx context.Context, s *mcp.ClientSession, method, id string) (*Task, error) {
	res, err := mcp.CallCustomMethod[*IDParams, *RawResult](ctx, s, method, &IDParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var t struct {
		Task
		// The extension's names (of protocol 2026-07-28).
		TTLMs          *float64 `json:"ttlMs"`
		PollIntervalMs float64  `json:"pollIntervalMs"`
	}
	err = json.Unmarshal(res.Raw, &t)
	if err == nil && t.Status == "" && method == "tasks/cancel" {
		// The extension acknowledges a cancel with an empty result; the
		// task's state is tasks/get's.
		return Get(ctx, s, "tasks/get", id)
	}
	if err != nil || t.Status == "" {
		return nil, fmt.Errorf("the server's answer to %s is not a task (%s)", method, textsafe.Preview(string(res.Raw), 200))
	}
	if t.TTL == nil {
		t.TTL = t.TTLMs
	}
	if t.PollInterval == 0 {
		t.PollInterval = t.PollIntervalMs
	}
	return &t.Task, nil
}

func Result(ctx context.Context, s *mcp.ClientSession, id string) (*mcp.CallToolResult, error) {
	res, err := mcp.CallCustomMethod[*IDParams, *RawResult](ctx, s, "tasks/result", &IDParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(res.Raw, &r); err != nil {
		return nil, fmt.Errorf("the result of task %s is not a tool result: %v", id, err)
	}
	if r.Meta == nil {
		r.Meta = mcp.Meta{}
	}
	r.Meta[MetaKey] = id
	return &r, nil
}

// Bounds of polling: the server's pollInterval is used within them.
const (
	defaultPollInterval = time.Second
	minPollInterval     = 100 * time.Millisecond
	// MaxPollInterval is also the longest the wait may grow to.
	MaxPollInterval = 30 * time.Second
)

func PollInterval(t *Task) time.Duration {
	if t.PollInterval <= 0 {
		return defaultPollInterval
	}
	d := time.Duration(t.PollInterval * float64(time.Millisecond))
	return min(max(d, minPollInterval), MaxPollInterval)
}

// ExtCallMethod is the alias of a tools/call that may be answered with a
// task of the extension; the connection renames it to tools/call.
const ExtCallMethod = "agentapp/ext-tasks/tools/call"

// ExtToolCallParams are the params of a tools/call sent under
// ExtCallMethod: those of a plain call (no params.task: the server
// decides).
type ExtToolCallParams struct {
	mcp.ParamsBase
	Name      string `json:"name"`
	Arguments any    `json:"arguments,omitempty"`
}

type UpdateParams struct {
	mcp.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses"`
}

// ExtTask is a task as the extension's tasks/get (and the answer that
// creates it) carries it.
type ExtTask struct {
	ResultType     string                  `json:"resultType"`
	TaskID         string                  `json:"taskId"`
	Status         string                  `json:"status"`
	StatusMessage  string                  `json:"statusMessage"`
	TTLMs          *float64                `json:"ttlMs"`
	PollIntervalMs float64                 `json:"pollIntervalMs"`
	InputRequests  map[string]InputRequest `json:"inputRequests"`
	Result         json.RawMessage         `json:"result"`
	Error          *jsonrpc.Error          `json:"error"`
}

type InputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func (t *ExtTask) Task() *Task {
	return &Task{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage, TTL: t.TTLMs, PollInterval: t.PollIntervalMs}
}

func registerExtMethods(client *mcp.Client) {
	_ = mcp.AddSendingCustomMethod[*ExtToolCallParams, *RawResult](client, ExtCallMethod)
	_ = mcp.AddSendingCustomMethod[*UpdateParams, *RawResult](client, "tasks/update")
}

func GetExt(ctx context.Context, s *mcp.ClientSession, id string) (*ExtTask, error) {
	res, err := mcp.CallCustomMethod[*IDParams, *RawResult](ctx, s, "tasks/get", &IDParams{TaskID: id})
	if err != nil {
		return nil, err
	}
	var t ExtTask
	if err := json.Unmarshal(res.Raw, &t); err != nil || t.Status == "" {
		return nil, fmt.Errorf("the server's answer to tasks/get is not a task (%s)", textsafe.Preview(string(res.Raw), 200))
	}
	return &t, nil
}
