package host

// Tool input while the model streams (MCP Apps'
// ui/notifications/tool-input-partial): the pieces of a call to a tool that
// links a view are gathered, repaired into valid JSON and reported as
// EventToolInputPartial, so that the front end can show the view before
// the call starts. Other tools' pieces are dropped at once: no front end
// wants them.

import (
	"maps"
	"slices"
	"time"

	"github.com/agentapp/agentapp/internal/partialjson"
	"github.com/agentapp/agentapp/model"
)

const (
	// partialEvery is the shortest time between two partial inputs of a
	// call: a view redraws on each, and a model writes many pieces a
	// second. The last one before the call starts is always reported.
	partialEvery = 50 * time.Millisecond
	// maxPartialArgs bounds the arguments gathered per call; past it the
	// view waits for the whole input.
	maxPartialArgs = 256 << 10
	// maxPartialCalls bounds the calls of one reply that are followed.
	maxPartialCalls = 32
)

// partialCall is a call the model is still writing.
type partialCall struct {
	id, name string
	server   string
	view     bool // the tool links a view: its pieces are gathered
	args     []byte
	over     bool      // args outgrew maxPartialArgs, or pieces were missed: no more reports
	sent     string    // the last input reported
	last     time.Time // when it was reported
	pending  bool      // pieces came after it
}

// toolDelta takes one piece of a call (model.Request.OnToolCallDelta). It
// is called from the loop's goroutine while the model streams.
func (t *running) toolDelta(d model.ToolCallDelta) {
	if d.Index < 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	if t.partials == nil {
		t.partials = map[int]*partialCall{}
	}
	p := t.partials[d.Index]
	if p == nil {
		if len(t.partials) >= maxPartialCalls {
			t.mu.Unlock()
			return
		}
		p = &partialCall{}
		t.partials[d.Index] = p
	}
	if d.ID != "" {
		p.id = d.ID
	}
	if d.Name != "" && d.Name != p.name {
		// A new name (or more of it): look its tool up, without holding
		// t.mu while the servers are asked. Only this goroutine changes
		// p's name.
		set, links := t.set, t.links
		t.mu.Unlock()
		server := OriginOf(set, d.Name)
		view := links != nil && server != "" && links(server, d.Name)
		t.mu.Lock()
		p.name, p.server, p.view = d.Name, server, view
	}
	if !p.view || p.over || p.id == "" {
		// Pieces that come before the call's id, or before a name that
		// links a view, are not kept: the arguments after them would
		// not be the call's.
		if d.Arguments != "" {
			p.over = true
		}
		t.mu.Unlock()
		return
	}
	if len(p.args)+len(d.Arguments) > maxPartialArgs {
		p.over, p.pending = true, false
		t.mu.Unlock()
		return
	}
	p.args = append(p.args, d.Arguments...)
	p.pending = true
	var ev *Event
	if p.last.IsZero() || now.Sub(p.last) >= partialEvery {
		ev = t.partialEvent(p, now)
	}
	t.mu.Unlock()
	if ev != nil {
		t.emit(*ev)
	}
}

// partialEvent returns the event of p's input as it stands, or nil when it
// is not yet an object or is what was last reported. t.mu is held.
func (t *running) partialEvent(p *partialCall, now time.Time) *Event {
	p.pending = false
	args := partialjson.Repair(p.args)
	if len(args) == 0 || args[0] != '{' || string(args) == p.sent {
		return nil
	}
	p.sent, p.last = string(args), now
	return &Event{Kind: EventToolInputPartial, Step: t.step, Server: p.server,
		Call: model.ToolCall{ID: p.id, Name: p.name, Arguments: args}}
}

// flushPartials reports the input of every call whose last pieces were
// held back, and forgets the reply's calls: the model has finished
// writing them, and the calls start next.
func (t *running) flushPartials() {
	t.mu.Lock()
	var evs []Event
	now := time.Now()
	for _, i := range slices.Sorted(maps.Keys(t.partials)) {
		if p := t.partials[i]; p.pending && !p.over {
			if ev := t.partialEvent(p, now); ev != nil {
				evs = append(evs, *ev)
			}
		}
	}
	t.partials = nil
	t.mu.Unlock()
	for _, ev := range evs {
		t.emit(ev)
	}
}
