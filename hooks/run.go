package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Input is the JSON object a hook reads on stdin. The fields are Claude
// Code's; each event sets its own (see the Hooks section of docs/permissions.md).
type Input struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode,omitempty"`
	HookEventName  Event           `json:"hook_event_name"`
	ToolName       string          `json:"tool_name,omitempty"`
	ToolInput      json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse   json.RawMessage `json:"tool_response,omitempty"`
	Prompt         string          `json:"prompt,omitempty"`
	// StopHookActive is set on Stop: true when the turn already goes on
	// because a Stop hook asked for it.
	StopHookActive *bool  `json:"stop_hook_active,omitempty"`
	Source         string `json:"source,omitempty"`  // SessionStart
	Reason         string `json:"reason,omitempty"`  // SessionEnd
	Trigger        string `json:"trigger,omitempty"` // PreCompact
	Message        string `json:"message,omitempty"` // Notification
}

// Result is what the hooks of one event decided, all of them together.
type Result struct {
	// Ran counts the hooks that ran.
	Ran int
	// Block: a hook exited 2, or answered "decision": "block", or
	// "continue": false; Reason is its stderr or its reason.
	Block  bool
	Reason string
	// Permission is PreToolUse's hookSpecificOutput.permissionDecision
	// ("allow", "deny", "ask"; the strictest of the hooks'), with its
	// reason.
	Permission       string
	PermissionReason string
	// UpdatedInput replaces the tool's arguments (PreToolUse).
	UpdatedInput json.RawMessage
	// Context is additionalContext (and UserPromptSubmit's plain stdout),
	// for the model.
	Context []string
	// Errors are the hooks that failed without blocking (another exit
	// code, a timeout, unreadable JSON), for the user; the event goes on.
	Errors []string
	// SystemMessages are the hooks' systemMessage warnings for the user.
	SystemMessages []string
}

// Runner runs the hooks of a configuration.
type Runner struct {
	cfg Config
	// Dir is the working directory of every hook (the project's).
	Dir string
	// MaxOutput caps what is kept of each hook's stdout and stderr
	// (DefaultMaxOutput when 0).
	MaxOutput int
}

// DefaultMaxOutput caps a hook's stdout and stderr each.
const DefaultMaxOutput = 64 << 10

// NewRunner returns a runner of cfg's hooks in dir.
func NewRunner(cfg Config, dir string) *Runner { return &Runner{cfg: cfg, Dir: dir} }

// Config returns the hooks the runner runs.
func (r *Runner) Config() Config {
	if r == nil {
		return nil
	}
	return r.cfg
}

// Has reports whether ev has any hook; a nil Runner has none.
func (r *Runner) Has(ev Event) bool { return r != nil && len(r.cfg[ev]) > 0 }

// Run runs the hooks of in.HookEventName whose matcher matches one of
// names (for a tool: its name and its mcp__SERVER__TOOL form; for
// SessionStart its source; none for events without matchers), all at once,
// and merges their answers. Identical commands run once. It returns when
// every hook has ended; each is bounded by its timeout and ctx, and killed
// with its process group when either passes.
func (r *Runner) Run(ctx context.Context, in Input, names ...string) Result {
	var res Result
	if r == nil {
		return res
	}
	if in.Cwd == "" {
		in.Cwd = r.Dir
	}
	var cmds []Command
	seen := map[string]bool{}
	for _, m := range r.cfg[in.HookEventName] {
		if len(names) > 0 && !m.Matches(names...) {
			continue
		}
		for _, h := range m.Hooks {
			if !seen[h.Command] {
				seen[h.Command] = true
				cmds = append(cmds, h)
			}
		}
	}
	if len(cmds) == 0 {
		return res
	}
	stdin, err := json.Marshal(in)
	if err != nil { // cannot happen: the fields are strings and valid JSON
		res.Errors = append(res.Errors, "hook input: "+err.Error())
		return res
	}
	outs := make([]outcome, len(cmds))
	var wg sync.WaitGroup
	for i, c := range cmds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = r.runOne(ctx, c, stdin)
		}()
	}
	wg.Wait()
	res.Ran = len(cmds)
	for i, o := range outs {
		res.merge(in.HookEventName, cmds[i], o)
	}
	return res
}

// outcome is how one hook ended.
type outcome struct {
	code           int
	stdout, stderr string
	err            error // it did not run, or was killed
}

func (r *Runner) runOne(ctx context.Context, c Command, stdin []byte) outcome {
	max := r.MaxOutput
	if max <= 0 {
		max = DefaultMaxOutput
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", c.Command)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "AGENTAPP_PROJECT_DIR="+r.Dir, "CLAUDE_PROJECT_DIR="+r.Dir)
	cmd.Stdin = bytes.NewReader(stdin)
	stdout, stderr := &capped{max: max}, &capped{max: max}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	setGroup(cmd) // the whole group is killed, so no child outlives its hook
	// A child that keeps the pipes open past the kill is not waited for
	// long.
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	reap(cmd)
	o := outcome{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			o.err = fmt.Errorf("timed out after %v and was stopped", c.Timeout)
		} else {
			o.err = fmt.Errorf("stopped: %v", ctx.Err())
		}
	case errors.As(err, &ee):
		o.code = ee.ExitCode()
	case err != nil:
		o.err = err
	}
	return o
}

// output is the JSON a hook may print on stdout (exit 0).
type output struct {
	Continue           *bool           `json:"continue"`
	StopReason         string          `json:"stopReason"`
	Decision           string          `json:"decision"`
	Reason             string          `json:"reason"`
	SystemMessage      string          `json:"systemMessage"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// PermissionRequest's answer: {"behavior": "allow"|"deny", "message"}.
	Decision *struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message"`
	} `json:"decision"`
}

// strictness orders permission decisions: the strictest hook wins.
var strictness = map[string]int{"allow": 1, "ask": 2, "deny": 3}

func (res *Result) merge(ev Event, c Command, o outcome) {
	name := fmt.Sprintf("hook %q (%s)", short(c.Command), c.Source)
	switch {
	case o.err != nil:
		res.Errors = append(res.Errors, name+" "+o.err.Error())
		return
	case o.code == 2:
		res.block(strings.TrimSpace(o.stderr), name+" exited 2")
		return
	case o.code != 0:
		msg := fmt.Sprintf("%s exited %d", name, o.code)
		if s := strings.TrimSpace(o.stderr); s != "" {
			msg += ": " + s
		}
		res.Errors = append(res.Errors, msg)
		return
	}
	out := strings.TrimSpace(o.stdout)
	if !strings.HasPrefix(out, "{") {
		// Plain stdout is context for the model where Claude Code makes
		// it so; elsewhere it is only shown in its transcript.
		if out != "" && (ev == UserPromptSubmit || ev == SessionStart) {
			res.Context = append(res.Context, out)
		}
		return
	}
	var j output
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		res.Errors = append(res.Errors, name+" printed JSON that does not parse: "+err.Error())
		return
	}
	if j.SystemMessage != "" {
		res.SystemMessages = append(res.SystemMessages, j.SystemMessage)
	}
	if j.Continue != nil && !*j.Continue {
		res.block(j.StopReason, name+" answered continue: false")
	}
	switch j.Decision {
	case "block":
		res.block(j.Reason, name+" blocked it")
	case "approve": // the older PreToolUse spelling
		res.permission("allow", j.Reason)
	}
	if s := j.HookSpecificOutput; s != nil {
		if s.PermissionDecision != "" {
			if _, ok := strictness[s.PermissionDecision]; !ok {
				res.Errors = append(res.Errors, fmt.Sprintf("%s: permissionDecision %q is not allow, deny or ask", name, s.PermissionDecision))
			} else {
				res.permission(s.PermissionDecision, s.PermissionDecisionReason)
			}
		}
		if d := s.Decision; d != nil {
			switch d.Behavior {
			case "allow", "deny":
				res.permission(d.Behavior, d.Message)
			}
		}
		if len(s.UpdatedInput) > 0 && string(s.UpdatedInput) != "null" {
			if bytes.HasPrefix(bytes.TrimSpace(s.UpdatedInput), []byte("{")) {
				res.UpdatedInput = s.UpdatedInput
			} else {
				res.Errors = append(res.Errors, name+": updatedInput is not a JSON object; ignored")
			}
		}
		if s.AdditionalContext != "" {
			res.Context = append(res.Context, s.AdditionalContext)
		}
	}
}

func (res *Result) block(reason, fallback string) {
	if reason == "" {
		reason = fallback
	}
	if !res.Block {
		res.Block, res.Reason = true, reason
		return
	}
	res.Reason += "; " + reason
}

func (res *Result) permission(d, reason string) {
	if strictness[d] > strictness[res.Permission] {
		res.Permission, res.PermissionReason = d, reason
	}
}

// short is a command held to one line of a message.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		return s[:77] + "..."
	}
	return s
}

// capped keeps the first max bytes written to it and drops the rest, so a
// hook that prints without end costs bounded memory (the writes still
// succeed: a hook is not failed for talking too much).
type capped struct {
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *capped) String() string { return c.buf.String() }
