package toolsearch

import (
	"fmt"
	"strings"
)

// Mode is the toolSearch setting.
type Mode string

// The modes: auto defers when the definitions are large, on always defers
// MCP tools, off never does.
const (
	ModeAuto Mode = "auto"
	ModeOn   Mode = "on"
	ModeOff  Mode = "off"
)

// ParseMode reads a toolSearch setting; "" is auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return ModeAuto, nil
	case ModeAuto, ModeOn, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("toolSearch is %q; it must be auto, on or off", s)
}

// DeferOptions are auto mode's thresholds. A nil *DeferOptions, or a zero
// field, means the default.
type DeferOptions struct {
	// Share of the context window the MCP tool definitions may take
	// before they are deferred (default 0.10).
	Share float64
	// Count of MCP tools above which they are deferred (default 40): past
	// a few dozen tools models choose worse, whatever the window.
	Count int
}

// Decision is whether to defer the MCP tools and why, for /tools and logs.
type Decision struct {
	Defer  bool
	Reason string
}

// Decide says whether MCP tool definitions of tokens tokens, count tools,
// are deferred behind searchTools in a window of window tokens.
func Decide(mode Mode, tokens, count, window int, opts *DeferOptions) Decision {
	var o DeferOptions
	if opts != nil {
		o = *opts
	}
	if o.Share <= 0 || o.Share > 1 {
		o.Share = 0.10
	}
	if o.Count <= 0 {
		o.Count = 40
	}
	switch mode {
	case ModeOff:
		return Decision{Reason: "tool search is off"}
	case ModeOn:
		if count == 0 {
			return Decision{Reason: "tool search is on, but there are no MCP tools"}
		}
		return Decision{Defer: true, Reason: "tool search is on"}
	}
	if count == 0 {
		return Decision{Reason: "no MCP tools"}
	}
	if window > 0 && float64(tokens) > o.Share*float64(window) {
		return Decision{Defer: true, Reason: fmt.Sprintf("the %d MCP tool definitions take about %d tokens, %.1f%% of the %d-token window (more than %.0f%%)",
			count, tokens, 100*float64(tokens)/float64(window), window, 100*o.Share)}
	}
	if count > o.Count {
		return Decision{Defer: true, Reason: fmt.Sprintf("%d MCP tools, more than %d", count, o.Count)}
	}
	return Decision{Reason: fmt.Sprintf("the %d MCP tool definitions (about %d tokens) fit", count, tokens)}
}
