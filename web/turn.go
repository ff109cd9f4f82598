package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/redact"
	"github.com/agentapp/agentapp/trace"
)

// turn is one running turn: its confirmer (approval.go) raises approvals
// on its stream, and its raw results are kept for its views.
type turn struct {
	s       *Server
	session string
	client  string // clientAddr of the request: the key of per-client caps
	api     string // "chat" or "openai", the metrics label
	// emit sends an event to the client; nil when nobody can see events
	// (the OpenAI endpoint), and then nobody can approve either.
	emit func(event string, data any) bool
	// results holds the tools' results as their servers sent them until
	// their steps end, and appSteps the steps with a view, kept with the
	// turn once it is stored (apps_steps.go).
	results  viewResults
	appSteps []appStep
	// accepted, when set, runs when the host has accepted the message
	// (host.EventAccepted): the stream starts then.
	accepted func()
}

// StepEvent is the data of a "step" event: one tool call, sent once when
// it starts (State "running") and once when it ends (State "ok", "error"
// or "denied", with Output or Error).
type StepEvent struct {
	// ID is the model's id of the call; the two events of a call share it.
	ID string `json:"id"`
	// Step counts the model turns that asked for tools, from 1.
	Step   int    `json:"step"`
	Tool   string `json:"tool"`
	Server string `json:"server"`
	// Input is the arguments as the model sent them (JSON when they parse,
	// else the raw text as a string).
	Input  json.RawMessage `json:"input"`
	State  string          `json:"state"`
	Output string          `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Cut is set when the result was over its cap: Output is then what
	// the model saw, the head and a note (cut.go).
	Cut *Cut `json:"cut,omitempty"`
	// UI is set when the tool links a view (MCP Apps) and views are on:
	// the page renders it with Input and Output.
	UI *StepUI `json:"ui,omitempty"`
}

// StatusEvent is the data of a "status" event: a running tool call that
// runs as an MCP task changed its status (one event per change, between
// the call's two "step" events, sharing their ID).
type StatusEvent struct {
	ID     string `json:"id"`
	Step   int    `json:"step"`
	Tool   string `json:"tool"`
	Server string `json:"server"`
	// Task is the server's id of the task; Status its status (working,
	// input_required, completed, failed, cancelled); Message the
	// server's status message, if any.
	Task    string `json:"task"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// QueuedEvent is the data of a "queued" event: an operator holds the
// conversation, so the message was stored and delivered to them and the
// assistant does not answer it ("done" follows with no answer).
type QueuedEvent struct {
	State    host.ConvState `json:"state"`
	Operator string         `json:"operator,omitempty"`
}

// HookEvent is the data of the "hook" event: a hook failed without
// blocking (Claude Code's non-blocking error, shown to the user); the
// turn goes on.
type HookEvent struct {
	Message string `json:"message"`
}

// event receives the host's events of the turn: each tool call is shown
// when it starts and when it ends (and counted), the answer's text as it
// comes. Approvals have events of their own (confirmer), which carry the id
// the page answers with.
func (t *turn) event(ev host.Event, onText func(string)) {
	switch ev.Kind {
	case host.EventAccepted:
		if t.accepted != nil {
			t.accepted()
		}
	case host.EventToolStart:
		if t.emit != nil {
			t.emit("step", StepEvent{ID: ev.Call.ID, Step: ev.Step, Tool: ev.Call.Name, Server: ev.Server, Input: jsonOrString(ev.Call.Arguments), State: "running", UI: t.s.stepUI(ev.Server, ev.Call.Name)})
		}
	case host.EventToolEnd:
		se := stepOf(*ev.Result, ev.Server)
		raw := t.results.take(se.ID)
		se.Cut = cutOf(ev.Cut)
		label := ev.Call.Name
		if se.Server == "" {
			label = "unknown" // a name the model made up: not a label value
		}
		t.s.metrics.toolCalls.WithLabelValues(label, se.State).Inc()
		if t.emit != nil {
			t.s.withUI(&se)
			if se.UI != nil {
				// The view gets the result as its server sent it, live
				// and after a reload.
				if res, ok := decodeResult(raw); ok && se.State == "ok" {
					se.UI.Result = res
				}
				t.appSteps = append(t.appSteps, appStep{CallID: se.ID, Tool: se.Tool, Server: se.Server, URI: se.UI.ResourceURI, Result: raw})
			}
			t.emit("step", se)
		}
	case host.EventToolInputPartial:
		t.partial(ev) // apps.go
	case host.EventToolStatus:
		if t.emit != nil {
			st := ev.Status
			t.emit("status", StatusEvent{ID: ev.Call.ID, Step: ev.Step, Tool: ev.Call.Name, Server: ev.Server, Task: st.Task, Status: st.Status, Message: st.Message})
		}
	case host.EventQueued:
		if t.emit != nil {
			t.emit("queued", QueuedEvent{State: ev.Queued.State, Operator: ev.Queued.Operator})
		}
	case host.EventText:
		if onText != nil {
			onText(ev.Text)
		}
	case host.EventHook:
		// The host leaves the log to the front end that shows it.
		t.s.log.Warn(ev.Text, "session", t.session)
		if t.emit != nil {
			t.emit("hook", HookEvent{Message: ev.Text})
		}
	case host.EventFold:
		if t.emit != nil {
			f := ev.Fold
			t.emit("fold", FoldEvent{Messages: f.Messages, Tokens: f.Tokens, SummaryTokens: f.SummaryTokens,
				Window: f.Window, KeptTurns: f.KeptTurns, Summary: f.Summary})
		}
	}
}

// stepOf describes a finished call of a tool from server.
func stepOf(ev agent.StepEvent, server string) StepEvent {
	se := StepEvent{ID: ev.CallID, Step: ev.Step, Tool: ev.ToolName, Server: server, Input: jsonOrString(ev.Input), State: "ok", Output: ev.Output}
	switch {
	case ev.Err != nil:
		se.State, se.Output, se.Error = "error", "", redact.Secrets(ev.Err.Error())
	case isDenial(ev.Output):
		se.State = "denied"
	}
	return se
}

// isDenial reports whether a tool's output is a guard's refusal.
func isDenial(out string) bool {
	var d struct {
		Denied bool `json:"denied"`
	}
	return len(out) > 0 && out[0] == '{' && json.Unmarshal([]byte(out), &d) == nil && d.Denied
}

func jsonOrString(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}

// runTurn runs a turn through the host, within the turn timeout,
// cancelled when ctx is (the client went away) or when a shutdown's drain
// runs out. onText, when set, streams the answer.
func (s *Server) runTurn(ctx context.Context, t *turn, ht host.Turn, onText func(string)) (*host.TurnResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.hardStop, cancel)
	defer stop()
	// The turn's questions are asked on its stream, and its raw results
	// kept for its views.
	ht.Confirmer = &confirmer{s: s, t: t}
	if s.opts.SandboxOrigin != "" {
		ht.OnToolResult = t.results.keep
	}

	start := time.Now()
	ht.Session = t.session
	ht.Stream = onText != nil
	ht.ToolInputPartial = t.emit != nil && s.opts.SandboxOrigin != "" // views want their input early
	ht.OnEvent = func(ev host.Event) { t.event(ev, onText) }
	if s.opts.Trace != nil {
		follow := host.Follow(trace.New(s.opts.Trace, trace.WithLabel("session="+t.session)))
		ht.OnEvent = func(ev host.Event) {
			follow(ev)
			t.event(ev, onText)
		}
	}
	ht.FrontEnd = "web"
	if t.api == "openai" {
		ht.FrontEnd = "v1"
	}
	res, err := s.h.Run(ctx, ht)
	if err == nil && ht.Conversation == nil {
		// The turn is stored: its views are kept with it. A failure
		// loses only the views' results, not the answer.
		sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), appStepsTimeout)
		if kerr := s.keepAppSteps(sctx, t.session, t.appSteps); kerr != nil {
			s.log.Error("keep the views of a turn", "session", t.session, "err", kerr)
		}
		scancel()
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
		switch {
		case errors.Is(err, context.Canceled):
			outcome = "cancelled"
		case errors.Is(err, context.DeadlineExceeded):
			outcome = "timeout"
		}
		err = s.explain(err)
	}
	s.metrics.turns.WithLabelValues(t.api, outcome).Inc()
	s.metrics.turnSeconds.WithLabelValues(t.api).Observe(time.Since(start).Seconds())
	return res, err
}

// explain words a failed turn for the person who asked.
func (s *Server) explain(err error) error {
	var modelErr *host.ModelError
	var tooLong *host.TooLongError
	var refused *host.InputRefusedError
	var storeErr *host.StoreError
	var tooBig *host.ContextError
	switch {
	case errors.As(err, &tooLong), errors.As(err, &refused), errors.As(err, &tooBig), errors.As(err, new(*host.HookBlockedError)),
		errors.As(err, new(*host.BudgetError)):
		return err
	case errors.As(err, &storeErr):
		s.log.Error(storeErr.Err.Error())
		return errors.New("the answer could not be stored, so it is not part of the conversation; ask again")
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the turn took longer than %v and was stopped; ask again, perhaps in smaller steps", s.h.TurnTimeout())
	case errors.Is(err, context.Canceled):
		if s.hardStop.Err() != nil {
			return errors.New("the server is shutting down and stopped the turn; ask again in a moment")
		}
		return errors.New("the turn was cancelled")
	case errors.Is(err, agent.ErrMaxSteps):
		return err
	}
	// A model's or anything else's failure: its text can hold the
	// provider's internal address and whatever it echoed (the key), so
	// the web user gets an id and the operator the details in the log.
	id := randomID("err-")[:16]
	if errors.As(err, &modelErr) {
		s.log.Error(fmt.Sprintf("turn failed (error id %s): %v", id, err), "error_id", id)
		return fmt.Errorf("the model could not answer (error id %s); try again in a moment, and give the id to the operator if it keeps failing", id)
	}
	s.log.Error(fmt.Sprintf("turn failed (error id %s): model %s: %v", id, s.h.Model().Name(), err), "error_id", id)
	return fmt.Errorf("the answer failed (error id %s); try again in a moment, and give the id to the operator if it keeps failing", id)
}
