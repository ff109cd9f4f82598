package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
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
			name: "git checkout, VCS stamped",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201100000-abc1234def56"}, Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "false"},
			}},
			line:  "agentapp devel (abc1234 2026-12-01T10:00:00Z, go1.26.8 linux/amd64)",
			short: "devel+abc1234",
		},
		{
			name: "git checkout after a tag, dirty",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.4-0.20261201100000-abc1234def56+dirty"}, Settings: []debug.BuildSetting{
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
				{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
			}},
			line:  "agentapp devel (abc1234+dirty 2026-12-01T10:00:00Z, go1.26.8 linux/amd64)",
			short: "devel+abc1234+dirty",
		},
		{
			name:  "go install of a commit",
			bi:    &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201100000-abc1234def56"}, Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}},
			line:  "agentapp v0.0.0-20261201100000-abc1234def56 (go1.26.8 linux/amd64)",
			short: "v0.0.0-20261201100000-abc1234def56",
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
func binaryBuildInfo(t *testing.T, bin string) buildInfo {
	t.Helper()
	out, err := exec.Command(bin, "version", "--json").Output()
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
	checkVersionCommand(t, agentappBin(t))
}

// checkVersionCommand runs the version checks on the checkout build bin.
func checkVersionCommand(t *testing.T, bin string) {
	t.Helper()
	b := binaryBuildInfo(t, bin)
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

// TestVersionCommandGitCheckout: a build from a git clone with Go's default
// -buildvcs=auto (which stamps a pseudo-version) still says "devel", as the
// README promises, and names its commit. The module's files are committed to
// a fresh repository because a git worktree is not stamped at all, and the
// test may run in one.
func TestVersionCommandGitCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds agentapp once more (-short)")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	root, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	src := strings.TrimSpace(string(root))
	files, err := exec.Command(git, "-C", src, "ls-files", "-z", "--cached").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	dir := t.TempDir()
	for _, f := range strings.Split(strings.TrimRight(string(files), "\x00"), "\x00") {
		data, err := os.ReadFile(filepath.Join(src, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the work tree, not yet committed
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--no-gpg-sign", "-m", "t"},
	} {
		cmd := exec.Command(git, append([]string{"-C", dir}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	bin := filepath.Join(t.TempDir(), "agentapp")
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/agentapp")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -buildvcs=true: %v\n%s", err, out)
	}
	checkVersionCommand(t, bin)
	if b := binaryBuildInfo(t, bin); len(b.Revision) != 40 {
		t.Errorf("a stamped checkout build has revision %q, want a commit", b.Revision)
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
