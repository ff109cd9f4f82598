package main

import (
	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
)

// The library packages say what went wrong and name no switch; the
// command line, which defines the flags and reads the environment, adds
// how to change it.

// hostHints name the environment variables behind the host's merge
// warnings and input refusals.
func hostHints() host.Hints {
	return host.Hints{
		KeepLocalTools: "set " + guard.EnvMCPStrict + "=1",
		LocalToolsWin:  guard.EnvMCPStrict + " is set",
		InputRefused:   "unset " + guard.EnvInput + " if this is a false alarm",
		ContextWindow:  "if the model's real window is larger, set it with --context-window or $" + envContextWindow,
		AllowFlag:      allowFlag,
	}
}

// webHints are the host's hints for the web: the merge warnings go to the
// operator's log and name the variables, but a refused message is answered
// to whoever uses the page, who cannot set the server's environment.
func webHints() host.Hints {
	h := hostHints()
	h.InputRefused = ""
	h.ContextWindow = ""
	return h
}

// chatHints name the flags and variables behind the chat's messages.
func chatHints() chat.Hints {
	return chat.Hints{
		Host:      hostHints(),
		AddServer: `add one with --mcp "<command line>" or --config FILE`,
		Guards:    "set AGENT_GUARD_* variables to turn them on",
		Resume: func(session string) string {
			return "resume it later with --session " + session + " or --continue"
		},
		TurnTimeout: "allow more time with --turn-timeout",
		MaxSteps:    "the limit is --max-steps",
		Unanswered:  askHint,
	}
}

// noSessionHint is added to chat.ErrNoSession.
const noSessionHint = "use --continue for the latest session, or leave --session out to start a new one"
