package mcpconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
)

// SpendSettings are the budget keys of a config file:
//
//	"maxSessionTokens": 200000, "maxTurnTokens": 50000, "maxDayTokens": 5000000, "maxCost": 1.5,
//	"pricing": {"gpt-4o": {"input": 2.5, "output": 10}}
//
// prices per million tokens, in whatever currency maxCost is in. A zero
// field is not set.
type SpendSettings struct {
	MaxSessionTokens int
	MaxTurnTokens    int
	MaxDayTokens     int
	MaxCost          float64
	Pricing          map[string]ModelPrice
}

// ModelPrice is one model's price per million input and output tokens.
type ModelPrice struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// maxPricedModels bounds the pricing table.
const maxPricedModels = 1000

// LoadSpend reads the budget keys of the config file at path. A file that
// does not exist has none; a key of the wrong kind is an *Error naming the
// file and the key.
func LoadSpend(path string) (SpendSettings, error) {
	var s SpendSettings
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, &Error{File: path, Msg: fmt.Sprintf("cannot read the file: %v", err)}
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return s, nil // Load reports what is wrong with the file
	}
	fail := func(field, msg string) error { return &Error{File: path, Field: field, Msg: msg} }
	for _, k := range []struct {
		name string
		to   *int
	}{{"maxSessionTokens", &s.MaxSessionTokens}, {"maxTurnTokens", &s.MaxTurnTokens}, {"maxDayTokens", &s.MaxDayTokens}} {
		if v, ok := top[k.name]; ok && !isNull(v) {
			if json.Unmarshal(v, k.to) != nil || *k.to < 1 {
				return SpendSettings{}, fail(k.name, fmt.Sprintf("want a whole number of tokens above 0, got %s", v))
			}
		}
	}
	if v, ok := top["maxCost"]; ok && !isNull(v) {
		if json.Unmarshal(v, &s.MaxCost) != nil || !(s.MaxCost > 0) || math.IsInf(s.MaxCost, 0) {
			return SpendSettings{}, fail("maxCost", fmt.Sprintf("want an amount above 0 (in the currency of \"pricing\"), got %s", v))
		}
	}
	if v, ok := top["pricing"]; ok && !isNull(v) {
		if json.Unmarshal(v, &s.Pricing) != nil {
			return SpendSettings{}, fail("pricing", `want {"MODEL": {"input": PRICE, "output": PRICE}}, prices per million tokens`)
		}
		if len(s.Pricing) > maxPricedModels {
			return SpendSettings{}, fail("pricing", fmt.Sprintf("more than %d models", maxPricedModels))
		}
		for m, p := range s.Pricing {
			if p.Input < 0 || p.Output < 0 || math.IsNaN(p.Input) || math.IsNaN(p.Output) {
				return SpendSettings{}, fail("pricing", fmt.Sprintf("model %q: prices cannot be negative", m))
			}
		}
	}
	return s, nil
}
