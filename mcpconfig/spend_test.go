package mcpconfig

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadSpend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "agentapp.json")
	writeTestFile(t, p, `{"maxSessionTokens": 100, "maxTurnTokens": 50, "maxDayTokens": 1000, "maxCost": 0.5, "pricing": {"gpt-4o": {"input": 2.5, "output": 10}}}`)
	s, err := LoadSpend(p)
	if err != nil || s.MaxSessionTokens != 100 || s.MaxTurnTokens != 50 || s.MaxDayTokens != 1000 || s.MaxCost != 0.5 || s.Pricing["gpt-4o"] != (ModelPrice{2.5, 10}) {
		t.Fatalf("%+v %v", s, err)
	}
	for content, want := range map[string]string{
		`{"maxSessionTokens": -1}`:                       "maxSessionTokens",
		`{"maxTurnTokens": "10"}`:                        "maxTurnTokens",
		`{"maxCost": 0}`:                                 "maxCost",
		`{"pricing": ["gpt-4o"]}`:                        "pricing",
		`{"pricing": {"m": {"input": -1, "output": 1}}}`: "cannot be negative",
	} {
		writeTestFile(t, p, content)
		if _, err := LoadSpend(p); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", content, err)
		}
	}
}
