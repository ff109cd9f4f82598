package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --operator NAME:TOKEN is read, and a value without a token, or a name
// or token given twice, is refused without echoing the token.
func TestParseOperators(t *testing.T) {
	ops, err := parseOperators([]string{"ana:tok-a", "Bo Chen:tok-b"})
	if err != nil || len(ops) != 2 || ops[1].Name != "Bo Chen" || ops[1].Token != "tok-b" {
		t.Fatalf("%+v, %v", ops, err)
	}
	for _, bad := range [][]string{{"ana"}, {":tok"}, {"ana:tok-a", "ana:tok-c"}, {"ana:tok-a", "bo:tok-a"}} {
		_, err := parseOperators(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "tok-") {
			t.Errorf("%q: the error shows the token: %v", bad, err)
		}
	}
}

// The config file's "operators" join the --operator ones, their tokens
// expanded from the environment; a name or token given in both is refused.
func TestWebOperatorsFromConfig(t *testing.T) {
	t.Setenv("AGENTAPP_TEST_ANA_TOKEN", "tok-ana")
	p := filepath.Join(t.TempDir(), "agentapp.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {}, "operators": [{"name": "Ana", "token": "${AGENTAPP_TEST_ANA_TOKEN}"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ops, err := webOperators([]string{"bo:tok-b"}, p)
	if err != nil || len(ops) != 2 || ops[0].Name != "bo" || ops[1].Name != "Ana" || ops[1].Token != "tok-ana" {
		t.Fatalf("%+v, %v", ops, err)
	}
	if _, err := webOperators([]string{"Ana:tok-c"}, p); err == nil {
		t.Error("an operator named in both the flag and the config was accepted")
	}
	if ops, err := webOperators([]string{"bo:tok-b"}, ""); err != nil || len(ops) != 1 {
		t.Errorf("without a config: %+v, %v", ops, err)
	}
}
