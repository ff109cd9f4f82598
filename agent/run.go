package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/agentapp/agentapp/model"
)

// DefaultMaxSteps bounds the tool rounds of a run when Options.MaxSteps is 0.
const DefaultMaxSteps = 5

// Options configure one run of the tool loop.
type Options struct {
	Model model.Model
	// Messages is the conversation so far, ending with the user's message.
	Messages []model.Message
	Tools    *ToolSet
	System   string
	// MaxSteps bounds the model turns that ask for tools; 0 means
	// DefaultMaxSteps.
	MaxSteps int
	// OnStep is called once per tool call, in call order, after the turn's
	// calls have all finished.
	OnStep func(StepEvent)
	// OnText, when set, makes the loop stream and receive text deltas.
	OnText func(delta string)
	// OnToolCallDelta, when set, makes the loop stream and receive the
	// pieces of the tool calls as the model writes them
	// (model.Request.OnToolCallDelta), before the calls run.
	OnToolCallDelta func(model.ToolCallDelta)
	// Observer, when set, follows the run (the trace uses it).
	Observer Observer
	// Refresh, when set, is called before each model call and may return
	// a new tool table (nil or the same pointer keeps the current one). It
	// is how tools that appear or vanish during a run (an MCP server's
	// tools/list_changed, a restarted server) reach the next request and
	// the calls that follow it.
	Refresh func(ctx context.Context) *ToolSet
}

// Result is the outcome of a run.
type Result struct {
	// Text is the final answer.
	Text string
	// Messages is the full history: the input messages followed by every
	// message the run added (assistant turns and tool results).
	Messages []model.Message
	// Steps is the number of model turns that asked for tools.
	Steps int
}

// MaxStepsError is returned when the model still asks for tools after
// MaxSteps rounds. It is not a configuration problem: the task did not
// converge, and rephrasing usually helps.
type MaxStepsError struct{ Steps int }

func (e *MaxStepsError) Error() string {
	return fmt.Sprintf("the task did not converge within %d tool rounds; try rephrasing the question or splitting it into smaller ones", e.Steps)
}

// Is makes errors.Is(err, ErrMaxSteps) match any MaxStepsError.
func (e *MaxStepsError) Is(target error) bool { return target == ErrMaxSteps }

// ErrMaxSteps matches the error of a run that ran out of steps.
var ErrMaxSteps = errors.New("maximum tool rounds reached")

// Run runs the tool loop: ask the model; if it calls no tool, its text is the
// answer; otherwise run the calls (concurrently, results in call order), feed
// each result back and ask again. Tool failures of any kind are fed back to
// the model as error results and never end the run. Cancelling ctx stops the
// run promptly, including tools still running.
func Run(ctx context.Context, opts Options) (*Result, error) {
	res, err := run(ctx, &opts)
	if opts.Observer != nil {
		opts.Observer.Done(res, err)
	}
	return res, err
}

func run(ctx context.Context, opts *Options) (*Result, error) {
	if opts.Model == nil {
		return nil, errors.New("agent.Run: no model")
	}
	maxSteps := opts.MaxSteps
	if maxSteps <= 0 {
		maxSteps = DefaultMaxSteps
	}
	specs := Specs(opts.Tools)
	res := &Result{Messages: append(make([]model.Message, 0, len(opts.Messages)+4), opts.Messages...)}
	req := &model.Request{System: opts.System, Tools: specs, OnToolCallDelta: opts.OnToolCallDelta}
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if opts.Refresh != nil {
			if ts := opts.Refresh(ctx); ts != nil && ts != opts.Tools {
				opts.Tools = ts
				specs = Specs(ts)
				req.Tools = specs
			}
		}
		req.Messages = res.Messages
		if opts.Observer != nil {
			opts.Observer.Think(res.Steps+1, len(req.Messages), len(specs))
		}
		resp, err := generate(ctx, opts, req)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
				err = fmt.Errorf("%w (%v)", ctxErr, err)
			}
			return res, err
		}
		msg := resp.Message
		msg.Role = model.RoleAssistant
		res.Messages = append(res.Messages, msg)
		if len(msg.ToolCalls) == 0 {
			res.Text = msg.Content
			return res, nil
		}
		if res.Steps >= maxSteps {
			return res, &MaxStepsError{Steps: maxSteps}
		}
		res.Steps++
		if opts.Observer != nil {
			opts.Observer.Act(res.Steps, msg.ToolCalls)
		}
		events, err := runCalls(ctx, opts.Tools, res.Steps, msg)
		if err != nil {
			return res, err
		}
		for i := range events {
			ev := &events[i]
			content := ev.Output
			if ev.Err != nil {
				content = ErrorOutput(ev.Err)
			}
			res.Messages = append(res.Messages, model.Message{
				Role:       model.RoleTool,
				Content:    content,
				ToolCallID: ev.CallID,
				Name:       ev.ToolName,
			})
			if opts.Observer != nil {
				opts.Observer.Observe(*ev)
			}
			if opts.OnStep != nil {
				opts.OnStep(*ev)
			}
		}
	}
}

// ErrorOutput is the tool message content the model sees for a failed call.
func ErrorOutput(err error) string {
	b, _ := json.Marshal(struct {
		Error string `json:"error"`
	}{err.Error()})
	return string(b)
}

// Specs returns the tool specifications offered to the model, in order.
func Specs(tools *ToolSet) []model.ToolSpec {
	if tools.Len() == 0 {
		return nil
	}
	specs := make([]model.ToolSpec, 0, tools.Len())
	for _, t := range tools.tools {
		specs = append(specs, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return specs
}

// runCalls runs a turn's tool calls concurrently and returns one event per
// call, in call order. It returns early with ctx's error when ctx is
// cancelled, without waiting for tools that ignore cancellation.
func runCalls(ctx context.Context, tools *ToolSet, step int, msg model.Message) ([]StepEvent, error) {
	events := make([]StepEvent, len(msg.ToolCalls))
	for i, c := range msg.ToolCalls {
		events[i] = StepEvent{Step: step, CallID: c.ID, ToolName: c.Name, Input: c.Arguments, Text: msg.Content}
	}
	if len(events) == 1 {
		// The common case: no goroutine, unless the tool must be abandoned on
		// cancellation, which callTool's own select handles.
		events[0].Output, events[0].Err = tracedTool(ctx, tools, msg.ToolCalls[0])
		return events, ctx.Err()
	}
	var wg sync.WaitGroup
	for i, c := range msg.ToolCalls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			events[i].Output, events[i].Err = tracedTool(ctx, tools, c)
		}()
	}
	wg.Wait()
	return events, ctx.Err()
}

// callTool runs one call, turning every failure into an error for the model.
func callTool(ctx context.Context, tools *ToolSet, c model.ToolCall) (string, error) {
	t, ok := tools.Get(c.Name)
	if !ok {
		return "", fmt.Errorf("%w %q; available tools: %v", ErrToolNotFound, c.Name, tools.Names())
	}
	if t.Validate {
		if err := t.CheckArgs(c.Arguments); err != nil {
			return "", err
		}
	}
	type outcome struct {
		out any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if r := recover(); r != nil {
				o = outcome{err: &PanicError{Tool: t.Name, Value: r, Stack: debug.Stack()}}
			}
			done <- o
		}()
		o.out, o.err = t.Execute(withCallID(ctx, c.ID), c.Arguments)
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if o.err != nil {
		return "", o.err
	}
	return FormatOutput(o.out)
}

// PanicError is the error of a tool that panicked. The model sees only the
// message; the stack is kept for logs.
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %s failed unexpectedly (panic: %v)", e.Tool, e.Value)
}
