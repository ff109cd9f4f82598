// Package hooks runs the command hooks of agentapp's configuration files:
// scripts that run at fixed points of a session (before a tool call, after
// it, when the user sends a prompt, …) and can block, change or log what
// happens. The configuration, the hook's input on stdin and its answer
// (exit code, JSON on stdout) have the shape Claude Code documents, so a
// hook script written for Claude Code runs unchanged where the event exists
// in both.
package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Event names a point of a session where hooks run.
type Event string

// The events, as Claude Code names them.
const (
	SessionStart      Event = "SessionStart"
	UserPromptSubmit  Event = "UserPromptSubmit"
	PreToolUse        Event = "PreToolUse"
	PermissionRequest Event = "PermissionRequest"
	PostToolUse       Event = "PostToolUse"
	Stop              Event = "Stop"
	PreCompact        Event = "PreCompact"
	SessionEnd        Event = "SessionEnd"
	Notification      Event = "Notification"
)

// Events are the events a configuration may name.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, Stop, PreCompact, SessionEnd, Notification}

// DefaultTimeout bounds a hook without a timeout of its own, as Claude
// Code's default does.
const DefaultTimeout = 60 * time.Second

// MaxTimeout bounds the timeout a configuration may give one hook.
const MaxTimeout = 10 * time.Minute

// Limits on one file's hooks: a configuration is written by hand, so these
// only stop a runaway file from growing the host's tables.
const (
	maxMatchersPerEvent = 100
	maxHooksPerMatcher  = 20
	maxCommandBytes     = 16 << 10
	maxMatcherBytes     = 1 << 10
)

// Command is one command hook.
type Command struct {
	// Command is run by /bin/sh -c exactly as configured.
	Command string
	// Timeout bounds the run (DefaultTimeout when the file gives none).
	Timeout time.Duration
	// Source says where the hook is configured ("agentapp.json (file
	// scope)"), for /hooks and for messages.
	Source string
}

// Matcher is a group of hooks and the names they apply to.
type Matcher struct {
	// Pattern is the matcher as written: "" and "*" match everything, a
	// name matches itself, anything else is a regular expression that must
	// match a whole name ("Edit|Write", "mcp__shop__.*").
	Pattern string
	re      *regexp.Regexp
	Hooks   []Command
}

// Matches reports whether any of names (a tool's own name and its
// mcp__SERVER__TOOL form, say) is matched.
func (m *Matcher) Matches(names ...string) bool {
	if m.Pattern == "" || m.Pattern == "*" {
		return true
	}
	for _, n := range names {
		if n == m.Pattern || (m.re != nil && m.re.MatchString(n)) {
			return true
		}
	}
	return false
}

// Config is the hooks in force, by event, in the order of the files read
// (lowest precedence first) and then of each file.
type Config map[Event][]Matcher

// Len counts the command hooks of c.
func (c Config) Len() int {
	n := 0
	for _, ms := range c {
		for _, m := range ms {
			n += len(m.Hooks)
		}
	}
	return n
}

// Add appends o's hooks to c's: every file's hooks run, as in Claude Code
// (a hook is not replaced by one of another scope).
func (c Config) Add(o Config) Config {
	if c == nil {
		c = Config{}
	}
	for ev, ms := range o {
		c[ev] = append(c[ev], ms...)
	}
	return c
}

// Commands lists the distinct command strings of c, sorted, for an
// approval that names them.
func (c Config) Commands() []string {
	var out []string
	for _, ms := range c {
		for _, m := range ms {
			for _, h := range m.Hooks {
				out = append(out, h.Command)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Parse reads a "hooks" object in Claude Code's shape:
//
//	{"PreToolUse": [{"matcher": "getOrderStatus",
//	  "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}]}
//
// source names the file for each hook. An unknown event, a hook type other
// than "command", a bad regular expression or a wrong shape is an error
// naming the entry: a hook silently dropped could be one that blocks.
func Parse(raw json.RawMessage, source string) (Config, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var byEvent map[string]json.RawMessage
	if err := json.Unmarshal(raw, &byEvent); err != nil {
		return nil, fmt.Errorf(`want an object like {"PreToolUse": [{"matcher": "TOOL", "hooks": [{"type": "command", "command": "..."}]}]}`)
	}
	c := Config{}
	for name, v := range byEvent {
		ev := Event(name)
		if !slices.Contains(Events, ev) {
			return nil, fmt.Errorf("unknown event %q; want one of %s", name, joinEvents())
		}
		var groups []struct {
			Matcher *string           `json:"matcher"`
			Hooks   []json.RawMessage `json:"hooks"`
		}
		if err := json.Unmarshal(v, &groups); err != nil {
			return nil, fmt.Errorf(`%s: want a list like [{"matcher": "TOOL", "hooks": [...]}]`, name)
		}
		if len(groups) > maxMatchersPerEvent {
			return nil, fmt.Errorf("%s: more than %d matchers", name, maxMatchersPerEvent)
		}
		for i, g := range groups {
			m := Matcher{}
			if g.Matcher != nil {
				m.Pattern = strings.TrimSpace(*g.Matcher)
			}
			if len(m.Pattern) > maxMatcherBytes {
				return nil, fmt.Errorf("%s[%d]: the matcher is over %d bytes", name, i, maxMatcherBytes)
			}
			if m.Pattern != "" && m.Pattern != "*" {
				re, err := regexp.Compile("^(?:" + m.Pattern + ")$")
				if err != nil {
					return nil, fmt.Errorf("%s[%d]: matcher %q is neither a name nor a regular expression: %v", name, i, m.Pattern, err)
				}
				m.re = re
			}
			if len(g.Hooks) == 0 {
				return nil, fmt.Errorf("%s[%d]: no hooks; want \"hooks\": [{\"type\": \"command\", \"command\": \"...\"}]", name, i)
			}
			if len(g.Hooks) > maxHooksPerMatcher {
				return nil, fmt.Errorf("%s[%d]: more than %d hooks", name, i, maxHooksPerMatcher)
			}
			for j, hr := range g.Hooks {
				cmd, err := parseCommand(hr)
				if err != nil {
					return nil, fmt.Errorf("%s[%d].hooks[%d]: %v", name, i, j, err)
				}
				cmd.Source = source
				m.Hooks = append(m.Hooks, cmd)
			}
			c[ev] = append(c[ev], m)
		}
	}
	return c, nil
}

func parseCommand(raw json.RawMessage) (Command, error) {
	var h struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Timeout *float64 `json:"timeout"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Command{}, fmt.Errorf(`want {"type": "command", "command": "...", "timeout": SECONDS}`)
	}
	if h.Type != "command" {
		return Command{}, fmt.Errorf("type %q is not supported; agentapp runs \"command\" hooks", h.Type)
	}
	if strings.TrimSpace(h.Command) == "" {
		return Command{}, fmt.Errorf("the command is empty")
	}
	if len(h.Command) > maxCommandBytes {
		return Command{}, fmt.Errorf("the command is over %d bytes; put it in a script", maxCommandBytes)
	}
	c := Command{Command: h.Command, Timeout: DefaultTimeout}
	if h.Timeout != nil {
		d := time.Duration(*h.Timeout * float64(time.Second))
		if d <= 0 || d > MaxTimeout {
			return Command{}, fmt.Errorf("timeout %v: want seconds above 0 and at most %v", *h.Timeout, MaxTimeout.Seconds())
		}
		c.Timeout = d
	}
	return c, nil
}

func joinEvents() string {
	s := make([]string, len(Events))
	for i, e := range Events {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}
