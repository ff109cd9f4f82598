package guard

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestFromEnvDefaultsOff(t *testing.T) {
	dir := t.TempDir()
	c, err := FromEnv(envOf(nil), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{AuditLog: filepath.Join(dir, "audit.log")}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("FromEnv with nothing set (-want +got):\n%s", d)
	}
	if c.Any() {
		t.Error("Any() = true with every guard off")
	}
	// The permission policy is always in force, so it always has its line.
	if a := c.Active(); len(a) != 1 || a[0] != "permissions: ask before MCP tools not declared read-only" {
		t.Errorf("Active() = %q with every guard off, want the default permission policy alone", a)
	}
}

func TestFromEnvReadsEverything(t *testing.T) {
	log := filepath.Join(t.TempDir(), "a.log")
	c, err := FromEnv(envOf(map[string]string{
		EnvAllowlist: " getOrderStatus, searchKnowledge ,,getOrderStatus",
		EnvConfirm:   "createTicket",
		EnvPII:       "1",
		EnvInput:     "TRUE",
		EnvMCPStrict: " true ",
		EnvAuditLog:  log,
	}), "/unused")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Allowlist: []string{"getOrderStatus", "searchKnowledge"},
		Confirm:   []string{"createTicket"},
		PII:       true, Input: true, MCPStrict: true,
		AuditLog: log,
	}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("FromEnv (-want +got):\n%s", d)
	}
	active := strings.Join(c.Active(), "\n")
	for _, w := range []string{"getOrderStatus, searchKnowledge", "createTicket", "PII", "MCP tool arguments", "user messages", "strict", log} {
		if !strings.Contains(active, w) {
			t.Errorf("Active() does not mention %q:\n%s", w, active)
		}
	}
}

func TestFromEnvSwitchValues(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, "1": true, "true": true, "True": true} {
		c, err := FromEnv(envOf(map[string]string{EnvPII: v}), t.TempDir())
		if err != nil || c.PII != want {
			t.Errorf("%s=%q: PII = %v, %v; want %v", EnvPII, v, c.PII, err, want)
		}
	}
}

func TestFromEnvErrors(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{EnvPII: "yes"}, EnvPII},
		{map[string]string{EnvInput: "on"}, EnvInput},
		{map[string]string{EnvMCPStrict: "2"}, EnvMCPStrict},
		{map[string]string{EnvAllowlist: "a b"}, "white space"},
		{map[string]string{EnvConfirm: " , ,"}, "names no tool"},
	}
	for _, c := range cases {
		_, err := FromEnv(envOf(c.env), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FromEnv(%v) = %v, want an error mentioning %q", c.env, err, c.want)
		}
	}
}

func TestAnyCountsEachGuard(t *testing.T) {
	for _, c := range []Config{
		{Allowlist: []string{"a"}}, {Confirm: []string{"a"}}, {PII: true}, {Input: true}, {MCPStrict: true},
	} {
		if !c.Any() {
			t.Errorf("Any() = false for %+v", c)
		}
		if a := c.Active(); len(a) == 0 || !strings.Contains(strings.Join(a, "|"), "MCP tool arguments") {
			t.Errorf("Active() for %+v = %q, want the argument scan listed", c, a)
		}
	}
}

// TestFromEnvStrictSwitch pins how the strict merge switch is read: it is
// documented under this name, and the chat's merge takes its policy from
// Config.MCPStrict alone, so this parse is the only one.
func TestFromEnvStrictSwitch(t *testing.T) {
	if EnvMCPStrict != "AGENT_GUARD_MCP_STRICT" {
		t.Errorf("EnvMCPStrict = %q, want AGENT_GUARD_MCP_STRICT", EnvMCPStrict)
	}
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "FALSE": false, " 0 ": false,
		"1": true, "true": true, "TRUE": true, " True ": true, " 1 ": true} {
		c, err := FromEnv(envOf(map[string]string{EnvMCPStrict: v}), t.TempDir())
		if err != nil || c.MCPStrict != want {
			t.Errorf("%s=%q: MCPStrict = %v, %v; want %v", EnvMCPStrict, v, c.MCPStrict, err, want)
		}
	}
	for _, v := range []string{"yes", "on", "2"} {
		if _, err := FromEnv(envOf(map[string]string{EnvMCPStrict: v}), t.TempDir()); err == nil || !strings.Contains(err.Error(), EnvMCPStrict) {
			t.Errorf("%s=%q: err = %v, want an error naming the variable", EnvMCPStrict, v, err)
		}
	}
}
