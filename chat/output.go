package chat

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
)

// OutputFormat is how Ask writes its result.
type OutputFormat string

// The output formats of one-shot mode (-p --output-format).
const (
	// OutputText streams the answer as plain text.
	OutputText OutputFormat = "text"
	// OutputJSON writes one Answer object when the run is over.
	OutputJSON OutputFormat = "json"
	// OutputStreamJSON writes one Event per line as the run goes.
	OutputStreamJSON OutputFormat = "stream-json"
)

// ParseOutputFormat checks a --output-format value.
func ParseOutputFormat(s string) (OutputFormat, error) {
	switch f := OutputFormat(strings.ToLower(strings.TrimSpace(s))); f {
	case OutputText, OutputJSON, OutputStreamJSON:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q; use text, json or stream-json", s)
}

// Answer is the machine-readable result of Ask with JSON output.
type Answer struct {
	Answer  string   `json:"answer"`
	Steps   []Step   `json:"steps"`
	Sources []Source `json:"sources"`
	Model   string   `json:"model"`
	Session string   `json:"session"`
	// Unavailable lists the configured MCP servers that were not running
	// for this answer (failed, needs login, disabled), so a script can
	// tell why tools were missing.
	Unavailable []UnavailableServer `json:"unavailable_servers,omitempty"`
	// Usage is what the answer's model calls cost: input and output
	// tokens, per call too, marked estimated where the provider reported
	// none.
	Usage *host.Usage `json:"usage,omitempty"`
	// Error is why the question was not answered; the other fields hold
	// what was done before it failed.
	Error string `json:"error,omitempty"`
}

// UnavailableServer is a configured MCP server that is not running.
type UnavailableServer struct {
	Name  string           `json:"name"`
	State host.ServerState `json:"state"`
	// Reason is the connection error, or the login hint.
	Reason string `json:"reason,omitempty"`
}

// unavailable lists the servers that are not running, for the JSON
// outputs.
func (c *Chat) unavailable() []UnavailableServer {
	var out []UnavailableServer
	for _, in := range c.Inactive() {
		u := UnavailableServer{Name: in.Name, State: in.State()}
		switch {
		case u.State == StateNeedsLogin:
			u.Reason = LoginHint(in.Err)
		case in.Err != nil:
			u.Reason = in.Err.Error()
		}
		out = append(out, u)
	}
	return out
}

// Step is one tool call of an Answer.
type Step struct {
	Step int    `json:"step"`
	Tool string `json:"tool"`
	// Server is the MCP server the tool comes from; empty for a local tool.
	Server string `json:"server,omitempty"`
	// Input is the arguments as the model sent them: JSON when they parse,
	// else the raw text as a string.
	Input json.RawMessage `json:"input"`
	// Output is the tool's result: the JSON value itself when the result
	// is JSON, else the text as a JSON string.
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Denied is set when a guard refused the call (a confirmation answered
	// no, a tool outside the allowlist); Output then holds the reason.
	Denied bool `json:"denied,omitempty"`
	// DurationMS is how long the call took, in milliseconds.
	DurationMS int64 `json:"duration_ms"`
	// Cut is set when the result was over its cap: Output is then what
	// the model saw, the head and a note (cut.go).
	Cut *Cut `json:"cut,omitempty"`
}

// Source is a knowledge-base hit that the answer cites as [No]; the one
// shape of every front end (host.Source).
type Source = host.Source

// Event is one line of stream-json output. Type says which fields are set:
//
//	session           session, model, unavailable_servers
//	step_start        step
//	token             text
//	tool_call         step, id, tool, server, input
//	tool_status       step, id, tool, server, task, status, message (a call
//	                  that runs as an MCP task: one per status change)
//	tool_result       step, id, tool, server, output or error, denied, duration_ms
//	approval_asked    tool, server, input
//	approval_answered tool, server, approved, reason
//	fold              step, fold (messages, summaryTokens, window): older
//	                  turns were folded into the summary
//	hook_error        message: a hook failed without blocking (exit code
//	                  other than 0 and 2, a timeout, bad JSON); the turn
//	                  goes on
//	done              answer, sources, usage
//	error             error
type Event struct {
	Type       string          `json:"type"`
	Session    string          `json:"session,omitempty"`
	Model      string          `json:"model,omitempty"`
	Step       int             `json:"step,omitempty"`
	Text       string          `json:"text,omitempty"`
	ID         string          `json:"id,omitempty"`
	Tool       string          `json:"tool,omitempty"`
	Server     string          `json:"server,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Denied     bool            `json:"denied,omitempty"`
	DurationMS *int64          `json:"duration_ms,omitempty"`
	Approved   *bool           `json:"approved,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Task       string          `json:"task,omitempty"`
	Status     string          `json:"status,omitempty"`
	Message    string          `json:"message,omitempty"`
	Answer     *string         `json:"answer,omitempty"`
	Sources    []Source        `json:"sources,omitempty"`
	Usage      *host.Usage     `json:"usage,omitempty"`
	Fold       *host.Fold      `json:"fold,omitempty"`
	Error      string          `json:"error,omitempty"`
	// Unavailable is on the session event: the configured MCP servers
	// that are not running.
	Unavailable []UnavailableServer `json:"unavailable_servers,omitempty"`
	// Cut is on a tool_result whose result was over its cap (cut.go).
	Cut *Cut `json:"cut,omitempty"`
}

// eventSink writes Events, one JSON object per line; tool calls that run
// at once and confirmation questions may emit concurrently. A nil sink
// drops them.
type eventSink struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func newEventSink(w io.Writer) *eventSink {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &eventSink{enc: enc}
}

func (s *eventSink) emit(ev Event) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.enc.Encode(ev)
}

// RefusedError is returned by Ask, after the output is written, when a
// guard refused one of the turn's tool calls: the answer was given without
// them, which a script must be able to tell from the exit status.
type RefusedError struct{ Tools []string }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the answer was given without %s: the call was refused (a confirmation was not approved, or a guard blocked it)", strings.Join(e.Tools, ", "))
}

// denial reports whether a tool output is a guard's refusal, and its
// reason.
func denial(output string) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(output), "{") {
		return "", false
	}
	var d guard.Denial
	if json.Unmarshal([]byte(output), &d) != nil || !d.Denied {
		return "", false
	}
	return d.Reason, true
}

// jsonValue is s as a JSON value: itself when it is JSON, else a string.
func jsonValue(s string) json.RawMessage {
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(s)
	return b
}

// toolCall is one call of the turn as it runs: when it started and which
// server its tool comes from.
type toolCall struct {
	step    int
	tool    string
	server  string
	started time.Time
	dur     time.Duration
	cut     *Cut // the result was over its cap (cut.go)
	// ended is set once the call's end line is written (its result, or
	// "cancelled" when Ctrl-C ended the turn first).
	ended bool
}

// stepOf builds the Answer's step for ev.
func stepOf(ev agent.StepEvent, call toolCall) Step {
	s := Step{Step: ev.Step, Tool: ev.ToolName, Server: call.server, Input: jsonOrString(ev.Input), DurationMS: call.dur.Milliseconds(), Cut: call.cut}
	switch {
	case ev.Err != nil:
		s.Error = ev.Err.Error()
	default:
		s.Output = jsonValue(ev.Output)
		_, s.Denied = denial(ev.Output)
	}
	return s
}

func jsonOrString(raw json.RawMessage) json.RawMessage {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return raw
	}
	b, _ := json.Marshal(string(raw))
	return b
}
