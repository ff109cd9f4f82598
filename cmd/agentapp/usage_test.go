package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestUsageErrorsExit2: every kind of usage error exits 2 with a message
// that says what was wrong and which --help to read, whichever command it
// is under.
func TestUsageErrorsExit2(t *testing.T) {
	bin := agentappBin(t)
	for _, tc := range []struct {
		args string
		want []string // in stderr
	}{
		{"frobnicate", []string{`unknown command "frobnicate" for "agentapp"`, "agentapp --help"}},
		{"chta", []string{`unknown command "chta"`, `did you mean "chat"?`}},
		{"kb frobnicate", []string{`unknown command "frobnicate" for "agentapp kb"`, "agentapp kb --help"}},
		{"serve extra", []string{`unknown command "extra" for "agentapp serve"`, "agentapp serve --help"}},
		{"mcp frobnicate", []string{`unknown subcommand "frobnicate"`, "agentapp mcp --help"}},
		{"--bogus", []string{"unknown flag: --bogus", "agentapp --help"}},
		{"-v", []string{"unknown shorthand flag: 'v'", "agentapp --help"}},
		{"chat --bogus", []string{"unknown flag: --bogus", "agentapp chat --help"}},
		{"kb list --bogus", []string{"unknown flag: --bogus", "agentapp kb list --help"}},
		{"mcp tools --bogus", []string{"unknown flag: --bogus", "agentapp mcp tools --help"}},
		{"chat --mpc x", []string{"unknown flag: --mpc; did you mean --mcp?", "agentapp chat --help"}},
		{"mcp tools --sever x", []string{"unknown flag: --sever; did you mean --server?"}},
		{"kb search", []string{"requires at least 1 arg(s)", "agentapp kb search --help"}},
		{"kb show a b", []string{"accepts 1 arg(s), received 2", "agentapp kb show --help"}},
		{"version extra", []string{`unknown command "extra"`, "agentapp version --help"}},
		{"chat --max-steps many", []string{`invalid argument "many" for "--max-steps"`, "agentapp chat --help"}},
		{"version --json=maybe", []string{`invalid argument "maybe" for "--json"`, "agentapp version --help"}},
		{"serve --token secret", []string{"--token only applies to HTTP", "agentapp serve --help"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			cmd := exec.Command(bin, strings.Fields(tc.args)...)
			cmd.Env = append(cmd.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
				t.Fatalf("agentapp %s: %v, want exit status %d; output:\n%s", tc.args, err, exitUsage, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("agentapp %s printed %q, want it to contain %q", tc.args, out, w)
				}
			}
		})
	}
}

// TestGroupWithoutArgsShowsHelp: a command group run without a subcommand
// still shows its help and exits 0, now that it is runnable.
func TestGroupWithoutArgsShowsHelp(t *testing.T) {
	for _, args := range [][]string{nil, {"kb"}} {
		out, err := exec.Command(agentappBin(t), args...).Output()
		if err != nil || !strings.Contains(string(out), "Available Commands:") {
			t.Errorf("agentapp %v: %v; output:\n%s", args, err, out)
		}
	}
}
