package budget

import (
	"encoding/json"

	"github.com/agentapp/agentapp/model"
)

// Per-message and per-request overheads of the chat format: the role and
// separators around each message, and the tokens that start the reply.
// They are the chat-completions figures (about 3 per message, 3 per reply);
// one more each is rounding on the safe side.
const (
	messageOverhead = 4
	replyOverhead   = 4
	toolOverhead    = 12 // the function wrapper, when a tool is counted by parts
)

// Message estimates one message: its text, its tool calls' names and
// arguments, and the format's overhead.
func (e *Estimator) Message(m model.Message) int {
	n := messageOverhead + e.Text(m.Content)
	if m.Name != "" {
		n += e.Text(m.Name) + 1
	}
	if m.ToolCallID != "" {
		n += e.Text(m.ToolCallID)
	}
	for _, c := range m.ToolCalls {
		n += messageOverhead + e.Text(c.Name) + e.Text(c.ID) + e.Text(string(c.Arguments))
	}
	return n
}

// Messages estimates a list of messages.
func (e *Estimator) Messages(ms []model.Message) int {
	n := 0
	for _, m := range ms {
		n += e.Message(m)
	}
	return n
}

// MessageTokens returns Message of each of ms, for a caller that keeps
// the figures with its messages (see PlanInput.HistoryTokens).
func (e *Estimator) MessageTokens(ms []model.Message) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = e.Message(m)
	}
	return out
}

// counted returns the estimate of ms given known, the figures of a prefix
// of ms as MessageTokens gives them; a known longer than ms is ignored.
func (e *Estimator) counted(ms []model.Message, known []int) int {
	if len(known) > len(ms) {
		known = nil
	}
	n := 0
	for _, k := range known {
		n += k
	}
	return n + e.Messages(ms[len(known):])
}

// Tool estimates one tool definition as a chat-completions request
// carries it: {"type":"function","function":{name, description,
// parameters}}, the JSON the weights were fitted on. Providers render
// definitions in their own, usually terser, form; the Calibrator learns
// the difference.
func (e *Estimator) Tool(t model.ToolSpec) int {
	if e.memo == nil {
		return e.tool(t)
	}
	if n, ok := e.memo.tool(t); ok {
		return n
	}
	n := e.tool(t)
	e.memo.putTool(t, n)
	return n
}

func (e *Estimator) tool(t model.ToolSpec) int {
	params := t.Parameters
	if len(params) == 0 || !json.Valid(params) {
		// Invalid parameters are counted as text, not dropped.
		return toolOverhead + e.Text(t.Name) + e.Text(t.Description) + e.Text(string(params))
	}
	b, err := json.Marshal(toolJSON{Type: "function", Function: toolFunc{Name: t.Name, Description: t.Description, Parameters: params}})
	if err != nil {
		return toolOverhead + e.Text(t.Name) + e.Text(t.Description) + e.Text(string(params))
	}
	return e.Text(string(b))
}

type toolJSON struct {
	Type     string   `json:"type"`
	Function toolFunc `json:"function"`
}

type toolFunc struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Tools estimates a list of tool definitions.
func (e *Estimator) Tools(ts []model.ToolSpec) int {
	n := 0
	for _, t := range ts {
		n += e.Tool(t)
	}
	return n
}

// Request estimates a whole request: system prompt, messages, tools and
// the reply's start (not the reply itself).
func (e *Estimator) Request(r *model.Request) int {
	return e.RequestCounted(r, nil)
}

// RequestCounted is Request for a caller that keeps the estimates of the
// first messages of r (known[i] is Message(r.Messages[i])): those are
// added up, not counted again. The figure is Request's.
func (e *Estimator) RequestCounted(r *model.Request, known []int) int {
	if r == nil {
		return 0
	}
	n := replyOverhead + e.counted(r.Messages, known) + e.Tools(r.Tools)
	if r.System != "" {
		n += e.Message(model.Message{Role: model.RoleSystem, Content: r.System})
	}
	return n
}

// JSON estimates an arbitrary JSON value as text (a tool result, a schema).
// A value that does not encode counts as 0.
func (e *Estimator) JSON(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return e.Text(string(b))
}
