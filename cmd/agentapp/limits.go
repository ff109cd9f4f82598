package main

import (
	"fmt"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/resultstore"
	"github.com/agentapp/agentapp/toolsearch"
	"github.com/spf13/pflag"
)

// limitFlags are the caps on what the model is sent, shared by chat and
// web.
type limitFlags struct {
	maxOutputTokens int
	toolSearch      string
	spend           spendFlags // spend.go
}

func addLimitFlags(fl *pflag.FlagSet, f *limitFlags) {
	fl.IntVar(&f.maxOutputTokens, "max-output-tokens", resultstore.DefaultMaxTokens,
		`cap on one tool result the model sees, in tokens; above it the model gets the head and reads the rest with readToolResult (a server's "maxOutputTokens" in the config overrides it)`)
	fl.StringVar(&f.toolSearch, "tool-search", "",
		`auto, on or off: defer the MCP tools behind searchTools (auto: when their definitions take over 10% of the model's context window or number over 40; default: the config's "toolSearch", else auto)`)
	f.spend.register(fl)
}

// limitOptions reads the limit flags, the config file's "toolSearch"
// when --tool-search is not given.
func limitOptions(f *limitFlags, configFile string) (maxOut int, ts *host.ToolSearchOptions, err error) {
	if f.maxOutputTokens < 1 || f.maxOutputTokens > mcpconfig.MaxOutputTokensLimit {
		return 0, nil, usageError("--max-output-tokens must be from 1 to %d tokens, e.g. %d", mcpconfig.MaxOutputTokensLimit, resultstore.DefaultMaxTokens)
	}
	mode := f.toolSearch
	if mode == "" && configFile != "" {
		s, err := mcpconfig.LoadSettings(configFile)
		if err != nil {
			return 0, nil, fmt.Errorf("%w; or give --tool-search auto|on|off", err)
		}
		mode = s.ToolSearch
	}
	m, err := toolsearch.ParseMode(mode)
	if err != nil {
		return 0, nil, usageError("--tool-search: %v", err)
	}
	return f.maxOutputTokens, &host.ToolSearchOptions{Mode: m}, nil
}

// limited returns o with the limits set.
func limited(maxOut int, ts *host.ToolSearchOptions, o *host.Options) *host.Options {
	o.MaxOutputTokens, o.ToolSearch = maxOut, ts
	return o
}
