package main

import (
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/spf13/pflag"
)

// exitBudget: -p stopped at a budget (--max-session-tokens,
// --max-turn-tokens, --max-cost or their config keys).
const exitBudget = 5

// spendFlags are the budget flags of chat and web.
type spendFlags struct {
	sessionTokens, turnTokens, dayTokens int
	cost                                 float64
}

func (s *spendFlags) register(fl *pflag.FlagSet) {
	fl.IntVar(&s.sessionTokens, "max-session-tokens", 0, `stop a turn that would take the session past N input+output tokens (checked before each model call on its estimate and output cap, and after it on the usage); config key "maxSessionTokens"`)
	fl.IntVar(&s.turnTokens, "max-turn-tokens", 0, `stop a turn past N input+output tokens; config key "maxTurnTokens"`)
	fl.IntVar(&s.dayTokens, "max-day-tokens", 0, `stop the turns of every session once they used N input+output tokens in this UTC day (per process; for web); config key "maxDayTokens"`)
	fl.Float64Var(&s.cost, "max-cost", 0, `stop a turn that would take the session's cost past AMOUNT, priced by the config's "pricing" table (per model, per million input and output tokens); config key "maxCost"`)
}

// spendOptions reads the budget flags, the config file's keys where a flag
// is not given, and the model's price for a cost cap.
func spendOptions(fl *pflag.FlagSet, s *spendFlags, configFile, modelName string) (host.Spend, error) {
	var cfg mcpconfig.SpendSettings
	if configFile != "" {
		var err error
		if cfg, err = mcpconfig.LoadSpend(configFile); err != nil {
			return host.Spend{}, err
		}
	}
	out := host.Spend{SessionTokens: cfg.MaxSessionTokens, TurnTokens: cfg.MaxTurnTokens, DayTokens: cfg.MaxDayTokens, Cost: cfg.MaxCost,
		Names: host.SpendNames{SessionTokens: "maxSessionTokens", TurnTokens: "maxTurnTokens", DayTokens: "maxDayTokens", Cost: "maxCost"}}
	if fl.Changed("max-session-tokens") {
		if s.sessionTokens < 1 {
			return out, usageError("--max-session-tokens must be a number of tokens above 0")
		}
		out.SessionTokens, out.Names.SessionTokens = s.sessionTokens, "--max-session-tokens"
	}
	if fl.Changed("max-turn-tokens") {
		if s.turnTokens < 1 {
			return out, usageError("--max-turn-tokens must be a number of tokens above 0")
		}
		out.TurnTokens, out.Names.TurnTokens = s.turnTokens, "--max-turn-tokens"
	}
	if fl.Changed("max-day-tokens") {
		if s.dayTokens < 1 {
			return out, usageError("--max-day-tokens must be a number of tokens above 0")
		}
		out.DayTokens, out.Names.DayTokens = s.dayTokens, "--max-day-tokens"
	}
	if fl.Changed("max-cost") {
		if !(s.cost > 0) {
			return out, usageError("--max-cost must be an amount above 0")
		}
		out.Cost, out.Names.Cost = s.cost, "--max-cost"
	}
	if out.Cost > 0 {
		p, ok := cfg.Pricing[modelName]
		if !ok {
			where := "the config file"
			if configFile != "" {
				where = configFile
			}
			return out, usageError(`%s needs the price of model %s: add "pricing": {%q: {"input": PRICE, "output": PRICE}} (per million tokens) to %s`,
				out.Names.Cost, modelName, modelName, where)
		}
		out.Price = &host.Price{Input: p.Input, Output: p.Output}
	}
	return out, nil
}
