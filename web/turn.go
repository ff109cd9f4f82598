package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/trace"
)

type turnKey struct{}

// turn is one running turn. Its context carries it (turnFrom), which is
// how a confirmation asked deep inside a guarded tool finds the stream to
// raise its approval on.
type turn struct {
	s       *Server
	session string
	api     string // "chat" or "openai", the metrics label
	// emit sends an event to the client; nil when nobody can see events
	// (the OpenAI endpoint), and then nobody can approve either.
	emit func(event string, data any) bool

	mu  sync.Mutex
	set *agent.ToolSet // the table of the latest model call
}

func turnFrom(ctx context.Context) *turn {
	t, _ := ctx.Value(turnKey{}).(*turn)
	return t
}

func (t *turn) tools() *agent.ToolSet {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.set
}

func (t *turn) setTools(set *agent.ToolSet) {
	t.mu.Lock()
	t.set = set
	t.mu.Unlock()
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
}

// Think implements agent.Observer.
func (t *turn) Think(int, int, int) {}

// Act implements agent.Observer: each call the model asks for is shown
// before it runs, so a page can show it live.
func (t *turn) Act(step int, calls []model.ToolCall) {
	if t.emit == nil {
		return
	}
	set := t.tools()
	for _, c := range calls {
		t.emit("step", StepEvent{ID: c.ID, Step: step, Tool: c.Name, Server: originOf(set, c.Name), Input: jsonOrString(c.Arguments), State: "running"})
	}
}

// Observe implements agent.Observer: each call's outcome, in call order.
func (t *turn) Observe(ev agent.StepEvent) {
	set := t.tools()
	se := stepOf(ev, set)
	label := ev.ToolName
	if se.Server == "" {
		label = "unknown" // a name the model made up: not a label value
	}
	t.s.metrics.toolCalls.WithLabelValues(label, se.State).Inc()
	if t.emit != nil {
		t.emit("step", se)
	}
}

// Done implements agent.Observer.
func (t *turn) Done(*agent.Result, error) {}

// stepOf describes a finished call.
func stepOf(ev agent.StepEvent, set *agent.ToolSet) StepEvent {
	se := StepEvent{ID: ev.CallID, Step: ev.Step, Tool: ev.ToolName, Server: originOf(set, ev.ToolName), Input: jsonOrString(ev.Input), State: "ok", Output: ev.Output}
	switch {
	case ev.Err != nil:
		se.State, se.Output, se.Error = "error", "", ev.Err.Error()
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

// runTurn runs msgs (the window and the new user message) through the
// loop, within the turn timeout, cancelled when ctx is (the client went
// away) or when a shutdown's drain runs out.
func (s *Server) runTurn(ctx context.Context, t *turn, msgs []model.Message, onText func(string)) (*agent.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.TurnTimeout)
	defer cancel()
	stop := context.AfterFunc(s.hardStop, cancel)
	defer stop()
	ctx = agent.WithSession(ctx, t.session)
	ctx = context.WithValue(ctx, turnKey{}, t)

	start := time.Now()
	t.setTools(s.tools.current(ctx))
	first := true
	res, err := agent.Run(ctx, agent.Options{
		Model:    s.opts.Model,
		Messages: msgs,
		Tools:    t.tools(),
		Refresh: func(ctx context.Context) *agent.ToolSet {
			if first { // the table was just read
				first = false
				return nil
			}
			set := s.tools.current(ctx)
			t.setTools(set)
			return set
		},
		System:   s.opts.System,
		MaxSteps: s.opts.MaxSteps,
		OnText:   onText,
		Observer: s.observer(t),
	})
	outcome := "ok"
	if err != nil {
		outcome = "error"
		switch {
		case errors.Is(err, context.Canceled):
			outcome = "cancelled"
		case errors.Is(err, context.DeadlineExceeded):
			outcome = "timeout"
		}
		err = s.explain(ctx, err)
	}
	s.metrics.turns.WithLabelValues(t.api, outcome).Inc()
	s.metrics.turnSeconds.WithLabelValues(t.api).Observe(time.Since(start).Seconds())
	return res, err
}

// observer is what follows a turn: the turn itself (its events and
// metrics) and, with Options.Trace, a tracer of its own labelled with the
// session.
func (s *Server) observer(t *turn) agent.Observer {
	if s.opts.Trace == nil {
		return t
	}
	return fanOut{t, trace.New(s.opts.Trace, trace.WithLabel("session="+t.session))}
}

// fanOut passes every event to each of its observers, in order.
type fanOut []agent.Observer

func (f fanOut) Think(step, messages, tools int) {
	for _, o := range f {
		o.Think(step, messages, tools)
	}
}

func (f fanOut) Act(step int, calls []model.ToolCall) {
	for _, o := range f {
		o.Act(step, calls)
	}
}

func (f fanOut) Observe(ev agent.StepEvent) {
	for _, o := range f {
		o.Observe(ev)
	}
}

func (f fanOut) Done(res *agent.Result, err error) {
	for _, o := range f {
		o.Done(res, err)
	}
}

// explain words a failed turn for the person who asked.
func (s *Server) explain(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the turn took longer than %v and was stopped; ask again, perhaps in smaller steps", s.opts.TurnTimeout)
	case errors.Is(err, context.Canceled):
		if s.hardStop.Err() != nil {
			return errors.New("the server is shutting down and stopped the turn; ask again in a moment")
		}
		return errors.New("the turn was cancelled")
	case errors.Is(err, agent.ErrMaxSteps):
		return err
	}
	return fmt.Errorf("model %s failed: %v", s.opts.Model.Name(), err)
}

// Source is one knowledge-base passage an answer cites as [N].
type Source struct {
	N     int    `json:"n"`
	DocID string `json:"docId"`
	Title string `json:"title"`
}

// citation finds an answer's [n] references; compiled on first use, since
// most agentapp commands never run a web turn.
var citation = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\[(\d{1,3})\]`) })

// sources lists the hits of the turn's knowledge-base searches that the
// answer cites, in the order of their numbers. A search output is any
// tool output with numbered hits (the local search and our MCP server's
// both have that shape); a later search's hit wins a shared number.
func sources(answer string, outputs []string) []Source {
	cited := map[int]bool{}
	for _, m := range citation().FindAllStringSubmatch(answer, 64) {
		n, _ := strconv.Atoi(m[1])
		cited[n] = true
	}
	if len(cited) == 0 {
		return nil
	}
	byNo := map[int]Source{}
	for _, out := range outputs {
		var o struct {
			Hits []struct {
				No    int    `json:"no"`
				DocID string `json:"docId"`
				Title string `json:"title"`
			} `json:"hits"`
		}
		if len(out) == 0 || out[0] != '{' || json.Unmarshal([]byte(out), &o) != nil {
			continue
		}
		for _, h := range o.Hits {
			if cited[h.No] {
				byNo[h.No] = Source{N: h.No, DocID: h.DocID, Title: h.Title}
			}
		}
	}
	out := make([]Source, 0, len(byNo))
	for _, src := range byNo {
		out = append(out, src)
	}
	slices.SortFunc(out, func(a, b Source) int { return a.N - b.N })
	return out
}

// toolOutputs returns the tool results among msgs.
func toolOutputs(msgs []model.Message) []string {
	var outs []string
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			outs = append(outs, m.Content)
		}
	}
	return outs
}
