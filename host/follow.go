package host

import (
	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
)

// Follow returns an event handler that drives o from a turn's events, for
// what follows the loop as an agent.Observer (the trace): Think at each
// model call, Act once per reply with all its calls, Observe at each call's
// end and Done at the turn's end. A handler follows one turn.
func Follow(o agent.Observer) func(Event) {
	acts := 0
	return func(ev Event) {
		switch ev.Kind {
		case EventStepStart:
			o.Think(ev.Step, ev.Messages, ev.Tools)
		case EventToolStart:
			if len(ev.Calls) > 0 && ev.Calls[0].ID == ev.Call.ID {
				acts++
				o.Act(ev.Step, ev.Calls)
			} else if len(ev.Calls) == 0 {
				acts++
				o.Act(ev.Step, []model.ToolCall{ev.Call})
			}
		case EventToolEnd:
			o.Observe(*ev.Result)
		case EventDone:
			o.Done(&agent.Result{Text: ev.Done.Answer, Steps: acts}, nil)
		case EventError:
			o.Done(&agent.Result{Steps: acts}, ev.Err)
		}
	}
}
