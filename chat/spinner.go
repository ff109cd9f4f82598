package chat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
)

// spinner shows that the model is working, on a terminal only: it redraws
// one line on stderr and erases it when stopped, so nothing of it stays in
// the scrollback or reaches a pipe. A nil *spinner does nothing.
type spinner struct {
	w io.Writer

	mu    sync.Mutex
	stop  chan struct{}
	done  chan struct{}
	label string // what the running spinner shows
}

var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// start shows label with an animated frame until stop. Starting a running
// spinner replaces its label. The label is escaped: it names tools the
// model asked for, and a model can be talked into any name.
func (s *spinner) start(label string) {
	if s == nil {
		return
	}
	s.startEscaped(textsafe.Escape(label))
}

func (s *spinner) startEscaped(label string) {
	s.halt()
	s.mu.Lock()
	defer s.mu.Unlock()
	stop, done := make(chan struct{}), make(chan struct{})
	s.stop, s.done, s.label = stop, done, label
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			s.mu.Lock()
			label := s.label
			s.mu.Unlock()
			io.WriteString(s.w, "\r"+spinFrames[i%len(spinFrames)]+" "+label+"\x1b[K")
			select {
			case <-stop:
				io.WriteString(s.w, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
}

// relabel changes what a running spinner shows (a tool's progress, say);
// a stopped spinner stays stopped, so a question it was paused for is not
// painted over. The label is escaped like start's.
func (s *spinner) relabel(label string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.label = textsafe.Escape(label)
	}
}

// around runs f (which writes whole lines) with the spinner's line erased,
// and starts the spinner again afterwards if it was running. A stopped
// spinner stays stopped, as with relabel.
func (s *spinner) around(f func()) {
	if s == nil {
		f()
		return
	}
	s.mu.Lock()
	running, label := s.stop != nil, s.label
	s.mu.Unlock()
	if !running {
		f()
		return
	}
	s.halt()
	f()
	s.mu.Lock()
	restarted := s.stop != nil
	s.mu.Unlock()
	if !restarted {
		s.startEscaped(label)
	}
}

// halt stops the spinner and erases its line; it returns once the line is
// gone, so the next write starts on a clean line.
func (s *spinner) halt() {
	if s == nil {
		return
	}
	s.mu.Lock()
	stop, done := s.stop, s.done
	s.stop, s.done = nil, nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// lineWriter writes the streamed reply and remembers whether the cursor is
// at the start of a line, so tool activity and the next prompt never start
// in the middle of the model's text.
type lineWriter struct {
	w       io.Writer
	mu      sync.Mutex
	wrote   bool
	midLine bool
}

func (l *lineWriter) write(s string) {
	if s == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	io.WriteString(l.w, s)
	l.wrote = true
	l.midLine = !strings.HasSuffix(s, "\n")
}

// endLine ends a partly written line.
func (l *lineWriter) endLine() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.midLine {
		io.WriteString(l.w, "\n")
		l.midLine = false
	}
}

// turnObserver keeps the spinner, the streamed text and the trace from
// overwriting each other: the spinner is erased before anything else is
// written, and restarted with a label saying what the turn waits for. It
// also times each tool call, for the activity lines (activity), the
// stream-json events (sink) and the JSON steps; each is optional.
type turnObserver struct {
	spin *spinner
	out  *lineWriter
	// inner follows the turn's events too (the trace; host.Follow).
	inner    func(host.Event)
	activity *activity
	sink     *eventSink
	tools    func() *agent.ToolSet // to find each tool's server
	hasView  func(server, tool string) bool
	now      func() time.Time
	// notes is where lines about the turn go that are not the answer (a
	// cut result: cut.go).
	notes io.Writer

	mu    sync.Mutex
	calls map[string]toolCall // by call id
	// waited is how long confirmation questions kept calls waiting, by
	// tool and arguments, so a call's duration is the tool's own time.
	waited map[string]time.Duration
}

// confirmWait records that a call of tool with args waited d for the user.
func (o *turnObserver) confirmWait(tool string, args []byte, d time.Duration) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waited == nil {
		o.waited = map[string]time.Duration{}
	}
	o.waited[tool+"\x00"+string(args)] += d
}

// newTurnObserver is the observer of one turn, without spinner, activity
// lines or events; the caller adds those it shows.
func (c *Chat) newTurnObserver() *turnObserver {
	o := &turnObserver{out: &lineWriter{w: c.cfg.Out}, tools: c.currentTools, hasView: c.hasView, now: c.cfg.Now, calls: map[string]toolCall{}, notes: c.cfg.Err}
	if c.cfg.Observer != nil {
		o.inner = host.Follow(c.cfg.Observer)
	}
	return o
}

// hasView reports whether a server's tool links an MCP Apps view.
func (c *Chat) hasView(server, tool string) bool {
	if server == "" {
		return false
	}
	u, _ := c.h.ToolUIOf(server, tool)
	return u.ResourceURI != ""
}

// call returns what the observer recorded of the call with that id.
func (o *turnObserver) call(id string) toolCall {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls[id]
}

// think: a model call begins.
func (o *turnObserver) think() {
	o.spin.halt()
	o.spin.start("thinking…")
}

// act: the model asked for calls, once per reply.
func (o *turnObserver) act(step int, calls []model.ToolCall) {
	o.spin.halt()
	o.out.endLine()
	set := o.tools()
	names := make([]string, len(calls))
	for i, c := range calls {
		names[i] = c.Name
		server := ""
		if t, ok := set.Get(c.Name); ok {
			server = t.Origin
		}
		o.mu.Lock()
		o.calls[c.ID] = toolCall{step: step, tool: c.Name, server: server, started: o.now()}
		o.mu.Unlock()
		o.activity.started(c.Name, server, c.Arguments)
	}
	o.spin.start("running " + strings.Join(names, ", ") + "…")
}

// observe: a call ended; it is timed here, before its end is shown.
func (o *turnObserver) observe(ev agent.StepEvent) {
	o.spin.halt()
	o.mu.Lock()
	call := o.calls[ev.CallID]
	if !call.started.IsZero() {
		key := ev.ToolName + "\x00" + string(ev.Input)
		call.dur = max(o.now().Sub(call.started)-o.waited[key], 0)
		delete(o.waited, key)
	}
	wasEnded := call.ended
	call.ended = true
	o.calls[ev.CallID] = call
	o.mu.Unlock()
	if wasEnded {
		return // its line was ended as cancelled
	}
	reason, refused := denial(ev.Output)
	if ev.Err != nil && errors.Is(ev.Err, context.Canceled) {
		o.activity.cancelled(ev.ToolName, call.dur)
		return
	}
	o.activity.ended(ev.ToolName, call.dur, ev.Err, reason, refused)
	if ev.Err == nil && !refused && o.hasView != nil {
		o.activity.viewOnWeb(ev.ToolName, o.hasView(call.server, ev.ToolName))
	}
}

// cancelOpen ends the line of every call of the turn that has not
// reported its end: Ctrl-C cancelled the turn, and the loop does not wait
// for a cancelled tool. A report that comes later writes nothing.
func (o *turnObserver) cancelOpen() {
	o.mu.Lock()
	type open struct {
		id   string
		call toolCall
	}
	var calls []open
	for id, call := range o.calls {
		if call.ended || call.started.IsZero() {
			continue
		}
		call.ended = true
		call.dur = max(o.now().Sub(call.started), 0)
		o.calls[id] = call
		calls = append(calls, open{id, call})
	}
	o.mu.Unlock()
	slices.SortFunc(calls, func(a, b open) int { return a.call.started.Compare(b.call.started) })
	for _, c := range calls {
		o.activity.cancelled(c.call.tool, c.call.dur)
	}
}

// event receives the host's events of the turn, its one stream: the
// spinner and activity lines follow the steps, the answer's text is
// written, and with stream-json output every step and approval is a line
// of its own. A call is timed before its end is shown.
func (o *turnObserver) event(ev host.Event) {
	if o.inner != nil {
		o.inner(ev)
	}
	switch ev.Kind {
	case host.EventStepStart:
		o.think()
	case host.EventToolStart:
		if len(ev.Calls) > 0 && ev.Calls[0].ID == ev.Call.ID {
			o.act(ev.Step, ev.Calls)
		}
	case host.EventToolEnd:
		o.observe(*ev.Result)
	case host.EventDone, host.EventError:
		o.spin.halt()
	}
	if ev.Kind == host.EventText {
		o.text(ev.Text)
		return
	}
	if ev.Kind == host.EventHook {
		o.hookFailed(ev.Text)
		return
	}
	if ev.Kind == host.EventFold && o.sink == nil {
		o.activity.folded(ev.Fold)
		return
	}
	o.recordCut(ev)
	if ev.Kind == host.EventToolStatus && o.activity != nil {
		o.spin.around(func() { o.activity.status(ev.Call.Name, ev.Status) })
	}
	if o.sink == nil {
		o.cutLine(ev)
		return
	}
	server := ev.Server
	if server == "local" {
		server = ""
	}
	switch ev.Kind {
	case host.EventStepStart:
		o.sink.emit(Event{Type: "step_start", Step: ev.Step})
	case host.EventToolStart:
		o.sink.emit(Event{Type: "tool_call", Step: ev.Step, ID: ev.Call.ID, Tool: ev.Call.Name, Server: server, Input: jsonOrString(ev.Call.Arguments)})
	case host.EventToolEnd:
		s := stepOf(*ev.Result, o.call(ev.Call.ID))
		ms := s.DurationMS
		o.sink.emit(Event{Type: "tool_result", Step: ev.Step, ID: ev.Call.ID, Tool: ev.Call.Name, Server: s.Server,
			Output: s.Output, Error: s.Error, Denied: s.Denied, DurationMS: &ms, Cut: cutOf(ev.Cut)})
	case host.EventToolStatus:
		o.sink.emit(Event{Type: "tool_status", Step: ev.Step, ID: ev.Call.ID, Tool: ev.Call.Name, Server: server,
			Task: ev.Status.Task, Status: ev.Status.Status, Message: ev.Status.Message})
	case host.EventFold:
		o.sink.emit(Event{Type: "fold", Step: ev.Step, Fold: ev.Fold})
	case host.EventApprovalAsked:
		req := ev.Approval.Request
		o.sink.emit(Event{Type: "approval_asked", Tool: req.Tool, Server: req.Server, Input: jsonOrString(req.Args)})
	case host.EventApprovalAnswered:
		req, d := ev.Approval.Request, ev.Approval.Decision
		approved := d.Approved
		o.sink.emit(Event{Type: "approval_answered", Tool: req.Tool, Server: req.Server, Approved: &approved, Reason: d.Reason})
	}
}

// hookFailed shows a hook that failed without blocking (Claude Code's
// "non-blocking error shown to the user"): a warning line on stderr, and
// with stream-json a hook_error event. The turn goes on.
func (o *turnObserver) hookFailed(msg string) {
	if o.notes != nil {
		o.spin.around(func() { fmt.Fprintln(o.notes, "agentapp: warning: "+textsafe.Escape(msg)) })
	}
	if o.sink != nil {
		o.sink.emit(Event{Type: "hook_error", Message: msg})
	}
}

// text receives streamed deltas.
func (o *turnObserver) text(delta string) {
	o.spin.halt()
	if o.sink != nil {
		o.sink.emit(Event{Type: "token", Text: delta})
		return
	}
	o.out.write(delta)
}

// pausingConfirmer stops the turn's spinner while a confirmation question
// waits for its answer: the spinner redraws its line ten times a second and
// would paint over the question. It restarts the spinner afterwards.
type pausingConfirmer struct {
	inner guard.Confirmer
	spin  *atomic.Pointer[spinner]
	// obs is told how long each question kept its call waiting; now is
	// the clock.
	obs *atomic.Pointer[turnObserver]
	now func() time.Time
}

func (p *pausingConfirmer) Confirm(ctx context.Context, req guard.ConfirmRequest) guard.Decision {
	s := p.spin.Load()
	s.halt()
	var start time.Time
	if p.now != nil {
		start = p.now()
	}
	d := p.inner.Confirm(ctx, req)
	if p.now != nil && p.obs != nil {
		p.obs.Load().confirmWait(req.Tool, req.Args, p.now().Sub(start))
	}
	if ctx.Err() == nil {
		s.start("running " + req.Tool + "…")
	}
	return d
}
