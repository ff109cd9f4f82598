package mcpconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "operators" is read with its tokens expanded like the servers' secrets;
// a wrong entry or an unset variable is an error naming the file and the
// entry, not the token.
func TestLoadOperators(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "agentapp.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(k string) (string, bool) {
		if k == "ANA_TOKEN" {
			return "tok-ana", true
		}
		return "", false
	}
	ops, err := LoadOperators(write(`{"mcpServers": {}, "operators": [{"name": "Ana", "token": "${ANA_TOKEN}"}, {"name": "Bo Chen", "token": "tok-bo"}]}`), env)
	if err != nil || len(ops) != 2 || ops[0] != (OperatorEntry{"Ana", "tok-ana"}) || ops[1] != (OperatorEntry{"Bo Chen", "tok-bo"}) {
		t.Fatalf("%+v, %v", ops, err)
	}
	if ops, err := LoadOperators(filepath.Join(dir, "none.json"), env); ops != nil || err != nil {
		t.Fatalf("a missing file: %+v, %v", ops, err)
	}
	if ops, err := LoadOperators(write(`{"mcpServers": {}}`), env); ops != nil || err != nil {
		t.Fatalf("no operators: %+v, %v", ops, err)
	}
	for body, want := range map[string]string{
		`{"operators": {"Ana": "tok-x"}}`:                        `"operators"`,
		`{"operators": [{"name": "Ana"}]}`:                       `operators[0]`,
		`{"operators": [{"name": "", "token": "tok-x"}]}`:        `operators[0]`,
		`{"operators": [{"name": "Ana", "token": "${NOPE}"}]}`:   `NOPE is not set`,
		`{"operators": [{"name": "Ana", "token": "${NOPE:-}"}]}`: `empty after`,
	} {
		_, err := LoadOperators(write(body), env)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "agentapp.json") {
			t.Errorf("%s: err = %v, want one naming the file and %s", body, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "tok-") {
			t.Errorf("%s: the error shows the token: %v", body, err)
		}
	}
}
