package agent

import (
	"encoding/json"

	"github.com/agentapp/agentapp/model"
)

// StepEvent reports one tool call of one step of a run.
type StepEvent struct {
	// Step counts model turns that asked for tools, from 1.
	Step int
	// CallID is the model's id of the call.
	CallID string
	// ToolName is the tool the model called.
	ToolName string
	// Input is the arguments as the model sent them.
	Input json.RawMessage
	// Output is what the model was shown when the call succeeded.
	Output string
	// Err is the failure the model was shown instead, if the call failed.
	Err error
	// Text is the model's text that accompanied the tool calls.
	Text string
}

// Observer follows a run from the inside. The trace implements it; all
// methods are called from the goroutine that called Run, in order.
type Observer interface {
	// Think is called before each model call.
	Think(step, messages, tools int)
	// Act is called when the model asks for tools.
	Act(step int, calls []model.ToolCall)
	// Observe is called for each tool call's result, in call order.
	Observe(ev StepEvent)
	// Done is called once when the run ends, with its error if any.
	Done(res *Result, err error)
}
