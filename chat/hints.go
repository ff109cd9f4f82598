package chat

import (
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
)

// Hints are the command line's words for the switches behind some of the
// chat's messages (flags, environment variables). The chat does not define
// those switches, so it names none itself; an empty hint adds nothing.
type Hints struct {
	// Host are the host's hints (merge warnings, input refusals), used
	// when the chat makes its own host (Config.Host is nil).
	Host host.Hints
	// AddServer says how to add an MCP server, e.g.
	// `add one with --mcp "<command line>" or --config FILE`.
	AddServer string
	// Guards says how to turn guards on when none is.
	Guards string
	// Resume says how to resume the session of the given ID later.
	Resume func(session string) string
	// TurnTimeout follows a turn that ran out of time, after "or", e.g.
	// "allow more time with --turn-timeout".
	TurnTimeout string
	// MaxSteps names the step limit after a turn that hit it.
	MaxSteps string
	// Unanswered says how to run a call without being asked, after a
	// question nobody could answer (stdin is not a terminal), e.g.
	// "allow it with --allow files:write_file".
	Unanswered func(guard.ConfirmRequest) string
}

// hintIn is hint in parentheses after a space, or "" without one.
func hintIn(hint string) string {
	if hint == "" {
		return ""
	}
	return " (" + hint + ")"
}
