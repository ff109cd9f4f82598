package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/spf13/pflag"
)

// envContextWindow sets the model's context window, next to OPENAI_MODEL;
// --context-window wins.
const envContextWindow = "OPENAI_CONTEXT_WINDOW"

// minContextWindow is the smallest window accepted: below it the system
// prompt and the tool definitions alone do not fit.
const minContextWindow = 1024

const contextWindowUsage = "the model's context window in tokens, which every request is planned against (0: the known window of the model, e.g. 128000 for glm-4-flash, else 32768; also $" + envContextWindow + ")"

func addContextWindowFlag(fl *pflag.FlagSet, f *chatFlags) {
	fl.IntVar(&f.contextWindow, "context-window", 0, contextWindowUsage)
}

// contextOptions sizes the host's context for m from --context-window or
// $OPENAI_CONTEXT_WINDOW. The offline model cannot summarize, so it folds
// older turns with the extractive summary.
func contextOptions(f *chatFlags, changed bool, m model.Model) (host.ContextOptions, error) {
	var o host.ContextOptions
	window, source := f.contextWindow, "--context-window"
	if !changed {
		if v := strings.TrimSpace(os.Getenv(envContextWindow)); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return o, usageError("$%s=%q is not a number of tokens; set it to the model's context window, e.g. 128000, or unset it", envContextWindow, v)
			}
			window, source = n, "$"+envContextWindow
		}
	}
	if window != 0 && window < minContextWindow {
		return o, usageError("%s %d: want at least %d tokens, or 0 for the model's known window (%d for %s)", source, window, minContextWindow, budget.LookupModel(m.Name()).Window, m.Name())
	}
	o.Window = window
	if _, ok := m.(*offline.Model); ok {
		o.Summarizer = budget.Extractive{}
	}
	return o, nil
}
