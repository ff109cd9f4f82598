package guard

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
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
	if a := c.Active(); len(a) != 0 {
		t.Errorf("Active() = %q with every guard off", a)
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

// TestStrictSwitchAgreesWithMerge keeps the guards and agent.Merge on one
// reading of AGENT_GUARD_MCP_STRICT: every value the guards accept means
// the same to agent.StrictFromEnv.
func TestStrictSwitchAgreesWithMerge(t *testing.T) {
	if EnvMCPStrict != agent.StrictMCPEnv {
		t.Fatalf("EnvMCPStrict = %q, agent.StrictMCPEnv = %q", EnvMCPStrict, agent.StrictMCPEnv)
	}
	for _, v := range []string{"", "0", "1", "true", "TRUE", " True ", "false", "FALSE", " 1 ", "yes", "on", "2"} {
		c, err := FromEnv(func(k string) string {
			if k == EnvMCPStrict {
				return v
			}
			return ""
		}, t.TempDir())
		if err != nil {
			if agent.StrictFromEnv(v) {
				t.Errorf("%q: the guards refuse it but the merge reads it as on", v)
			}
			continue
		}
		if c.MCPStrict != agent.StrictFromEnv(v) {
			t.Errorf("%q: guards say strict=%v, merge says %v", v, c.MCPStrict, agent.StrictFromEnv(v))
		}
	}
}
