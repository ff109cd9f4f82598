// Package trace writes a one-line-per-event account of an agent run, for
// people watching the tool loop work: what the model was asked (think), which
// tools it called (act), what came back (observe ok / observe error) and how
// the run ended (done). The chat writes it to stderr when --trace or
// AGENT_TRACE=1 is set, so stdout keeps only the answer.
//
// Every line starts with Prefix and a step marker, so it is easy to grep or
// filter out, and long values are cut to a bounded preview that still says
// how long they were. Names, arguments and results come from the model and
// from MCP servers, so every value is escaped by the program's one rule
// (package internal/textsafe): a newline, a terminal escape or a
// bidirectional override cannot break a line or change how it reads.
package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
)

// Prefix starts every trace line.
const Prefix = "[trace]"

// DefaultPreview is how many characters of a value a line shows by default
// (see textsafe.Preview for how a cut value ends):
// enough to recognise an argument or a result, short enough to keep one
// event on one terminal line or two.
const DefaultPreview = 120

// Tracer writes trace lines to a writer. It implements agent.Observer and is
// safe for concurrent use: each line is written whole, under a lock, so the
// lines of runs sharing a writer never interleave mid-line. Write errors are
// ignored, because tracing must never break the run it watches.
//
// Elapsed times count from the first model call of the current run and
// restart after its Done; runs that overlap in time should each get their
// own Tracer (they may share the writer).
type Tracer struct {
	mu      sync.Mutex
	w       io.Writer
	preview int
	now     func() time.Time
	// start is when the current run's first model call began; running says
	// whether a run is in progress (between its first Think and its Done).
	start   time.Time
	running bool
	// step is the last step seen, for the done line's marker.
	step int
	// label, when set, follows Prefix on every line (WithLabel).
	label string
}

var _ agent.Observer = (*Tracer)(nil)

// Option configures a Tracer.
type Option func(*Tracer)

// WithPreview sets how many characters of a value a line shows; n <= 0
// keeps DefaultPreview.
func WithPreview(n int) Option {
	return func(t *Tracer) {
		if n > 0 {
			t.preview = n
		}
	}
}

// WithClock replaces the wall clock used for elapsed times, so tests and
// examples print stable lines. A nil clock is ignored.
func WithClock(now func() time.Time) Option {
	return func(t *Tracer) {
		if now != nil {
			t.now = now
		}
	}
}

// WithLabel puts label after Prefix on every line, so the runs of several
// sessions sharing one writer (agentapp web) can be told apart. It is
// escaped like every value; an empty label is ignored.
func WithLabel(label string) Option {
	return func(t *Tracer) {
		if label != "" {
			t.label = textsafe.Escape(label) + " "
		}
	}
}

// New returns a tracer writing to w.
func New(w io.Writer, opts ...Option) *Tracer {
	t := &Tracer{w: w, preview: DefaultPreview, now: time.Now}
	for _, o := range opts {
		o(t)
	}
	return t
}

// Think implements agent.Observer: a model call is about to be made.
func (t *Tracer) Think(step, messages, tools int) {
	t.line(step, true, fmt.Sprintf("think: messages=%d tools=%d", messages, tools))
}

// Act implements agent.Observer: the model asked for tools. Each call is
// shown with a preview of its arguments.
func (t *Tracer) Act(step int, calls []model.ToolCall) {
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = textsafe.Preview(c.Name, t.preview) + " " + textsafe.Preview(compactArgs(c.Arguments), t.preview)
	}
	t.line(step, false, "act: "+strings.Join(parts, " | "))
}

// Observe implements agent.Observer: one tool call's result. The tool's
// name was shown, cut, on the act line; here it is shown whole, so the
// result can be matched to its call.
func (t *Tracer) Observe(ev agent.StepEvent) {
	name := textsafe.Escape(ev.ToolName)
	if ev.Err != nil {
		t.line(ev.Step, false, fmt.Sprintf("observe error: %s -> %s", name, textsafe.Preview(ev.Err.Error(), t.preview)))
		return
	}
	t.line(ev.Step, false, fmt.Sprintf("observe ok: %s -> %s", name, textsafe.Preview(ev.Output, t.preview)))
}

// Done implements agent.Observer: the run ended, with its answer or error.
func (t *Tracer) Done(res *agent.Result, err error) {
	steps := 0
	answer := ""
	if res != nil {
		steps, answer = res.Steps, res.Text
	}
	var text string
	if err != nil {
		text = fmt.Sprintf("done error: steps=%d error: %s", steps, textsafe.Preview(err.Error(), t.preview))
	} else {
		text = fmt.Sprintf("done: steps=%d answer: %s", steps, textsafe.Preview(answer, t.preview))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writeLocked(t.step, text)
	t.running = false
}

// line writes one event line; think marks the start of a model call, which
// starts the elapsed clock when no run is in progress.
func (t *Tracer) line(step int, think bool, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if think {
		t.step = step
	}
	t.writeLocked(step, text)
}

func (t *Tracer) writeLocked(step int, text string) {
	now := t.now()
	if !t.running {
		t.start, t.running = now, true
	}
	ms := now.Sub(t.start).Milliseconds()
	_, _ = fmt.Fprintf(t.w, "%s %sstep %d +%dms %s\n", Prefix, t.label, step, ms, text)
}

// compactArgs shows arguments as compact JSON when they are valid JSON, as
// sent otherwise, and as {} when absent.
func compactArgs(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, args); err != nil {
		return string(args)
	}
	return b.String()
}

// EnvTrace names the environment variable that turns tracing on.
const EnvTrace = "AGENT_TRACE"

// Enabled reports whether tracing is on: when flag (--trace) is set, or when
// the AGENT_TRACE environment variable, read through getenv (os.Getenv in
// the program, a map in tests), is 1, true or yes (in any case). A nil
// getenv means the variable is not set.
func Enabled(flag bool, getenv func(string) string) bool {
	if flag {
		return true
	}
	if getenv == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(getenv(EnvTrace))) {
	case "1", "true", "yes":
		return true
	}
	return false
}
