package main

import (
	"encoding/json"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildInfo: the version line and the short version are derived from
// the embedded build information, for a release, a dirty checkout and a
// binary without VCS information.
func TestBuildInfo(t *testing.T) {
	rev := "abc1234def5678abc1234def5678abc1234def56"
	for _, tc := range []struct {
		name  string
		bi    *debug.BuildInfo
		line  string
		short string
	}{
		{
			name: "release",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "false"},
			}},
			line:  "agentapp v1.2.3 (abc1234 2026-12-01T10:00:00Z, go1.26.8 linux/amd64)",
			short: "v1.2.3",
		},
		{
			name: "dirty checkout",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "darwin"}, {Key: "GOARCH", Value: "arm64"},
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
			}},
			line:  "agentapp devel (abc1234+dirty 2026-12-01T10:00:00Z, go1.26.8 darwin/arm64)",
			short: "devel+abc1234+dirty",
		},
		{
			name:  "go install, no VCS",
			bi:    &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.9.0"}, Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "arm64"}}},
			line:  "agentapp v0.9.0 (go1.26.8 linux/arm64)",
			short: "v0.9.0",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuildInfo(tc.bi)
			if got := b.String(); got != tc.line {
				t.Errorf("String() = %q, want %q", got, tc.line)
			}
			if got := b.Short(); got != tc.short {
				t.Errorf("Short() = %q, want %q", got, tc.short)
			}
		})
	}
	if b := newBuildInfo(nil); b.Version != "devel" || b.GoVersion != runtime.Version() {
		t.Errorf("newBuildInfo(nil) = %+v", b)
	}
}

// binaryBuildInfo runs `agentapp version --json` on the test binary.
func binaryBuildInfo(t *testing.T) buildInfo {
	t.Helper()
	out, err := exec.Command(agentappBin(t), "version", "--json").Output()
	if err != nil {
		t.Fatalf("agentapp version --json: %v", err)
	}
	var b buildInfo
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("agentapp version --json printed %q: %v", out, err)
	}
	return b
}

// TestVersionCommand: `agentapp version` and `agentapp --version` print the
// same one line from the build information, --json the same as an object.
func TestVersionCommand(t *testing.T) {
	bin := agentappBin(t)
	b := binaryBuildInfo(t)
	if b.GoVersion != runtime.Version() || b.OS != runtime.GOOS || b.Arch != runtime.GOARCH {
		t.Errorf("version --json = %+v, want %s %s/%s", b, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	if b.Version != "devel" {
		t.Errorf("a checkout build has version %q, want devel", b.Version)
	}
	want := b.String() + "\n"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("agentapp %s: %v", strings.Join(args, " "), err)
		}
		if string(out) != want {
			t.Errorf("agentapp %s printed %q, want %q", strings.Join(args, " "), out, want)
		}
	}
}

// TestVerboseShorthand: -v is not a root flag (it would be ambiguous with
// mcp's --verbose), and the mcp subcommands still take it.
func TestVerboseShorthand(t *testing.T) {
	root := newRootCmd()
	if f := root.Flags().ShorthandLookup("v"); f != nil {
		t.Errorf("the root has -v for --%s", f.Name)
	}
	for _, sub := range []string{"tools", "call", "resources", "read"} {
		cmd, _, err := root.Find([]string{"mcp", sub})
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.ParseFlags([]string{"-v"}); err != nil {
			t.Fatalf("mcp %s -v: %v", sub, err)
		}
		if on, _ := cmd.Flags().GetBool("verbose"); !on {
			t.Errorf("mcp %s -v did not set --verbose", sub)
		}
	}
}
