package chat

import (
	"fmt"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
)

// Cut says that a tool result was over its cap (--max-output-tokens, a
// server's maxOutputTokens): the model saw its first Shown bytes and can
// read the rest by ID with readToolResult.
type Cut struct {
	// ID is the stored whole's handle; empty when it could not be stored.
	ID     string `json:"id,omitempty"`
	Bytes  int    `json:"bytes"`
	Tokens int    `json:"tokens"`
	Shown  int    `json:"shown_bytes"`
	// Notice is the line the terminal shows.
	Notice string `json:"notice"`
}

func cutOf(c *host.ResultCut) *Cut {
	if c == nil {
		return nil
	}
	return &Cut{ID: c.ID, Bytes: c.Bytes, Tokens: c.Tokens, Shown: c.Shown, Notice: c.Notice}
}

// cutLine tells the user on the terminal that a tool result was cut: a
// cut is never silent.
func (o *turnObserver) cutLine(ev host.Event) {
	if ev.Kind != host.EventToolEnd || ev.Cut == nil || o.notes == nil {
		return
	}
	o.spin.halt()
	o.out.endLine()
	fmt.Fprintf(o.notes, "✂ %s\n", textsafe.Escape(ev.Cut.Notice))
}

// recordCut keeps a cut with its call, for the step of --output-format
// json.
func (o *turnObserver) recordCut(ev host.Event) {
	if ev.Kind != host.EventToolEnd || ev.Cut == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	c := o.calls[ev.Call.ID]
	c.cut = cutOf(ev.Cut)
	o.calls[ev.Call.ID] = c
}
