package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildInfo describes the running binary. It is read from the build
// information the Go toolchain embeds, so that a bug report names the exact
// module version and commit without anyone having to remember -ldflags.
type buildInfo struct {
	// Version is the main module's version, e.g. "v1.2.3", or "devel" for
	// a binary built from a checkout (the toolchain's "(devel)").
	Version string `json:"version"`
	// Revision is the full VCS revision, empty when the toolchain did not
	// record one (go install of a module, or -buildvcs=false).
	Revision string `json:"revision,omitempty"`
	// Time is the commit time of Revision, in RFC 3339.
	Time string `json:"time,omitempty"`
	// Modified reports whether the work tree had uncommitted changes.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"go"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
}

// readBuildInfo returns the running binary's build information.
func readBuildInfo() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return newBuildInfo(bi)
}

// newBuildInfo extracts what agentapp reports from bi, which may be nil
// (a binary built without module support).
func newBuildInfo(bi *debug.BuildInfo) buildInfo {
	b := buildInfo{Version: "devel", GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if bi == nil {
		return b
	}
	if bi.GoVersion != "" {
		b.GoVersion = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "GOOS":
			b.OS = s.Value
		case "GOARCH":
			b.Arch = s.Value
		}
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !stampedFromCheckout(v, b.Revision) {
		b.Version = v
	}
	return b
}

// stampedFromCheckout reports whether version is the pseudo-version the Go
// toolchain (1.24 on) stamps on a build from an untagged git checkout, e.g.
// "v0.0.0-20261202131447-2d74cd496781+dirty". That carries nothing the
// revision and time do not, and with -buildvcs=false the same checkout says
// "(devel)": both report "devel", so the version does not depend on a build
// flag. A go install of a module at a commit has no vcs.revision setting and
// keeps its pseudo-version.
func stampedFromCheckout(version, revision string) bool {
	if len(revision) < 12 {
		return false
	}
	v := strings.TrimSuffix(version, "+dirty")
	// The pseudo-version ends in -YYYYMMDDhhmmss-<first 12 of revision>.
	rest, ok := strings.CutSuffix(v, "-"+revision[:12])
	if !ok || len(rest) < 15 || rest[len(rest)-15] != '-' && rest[len(rest)-15] != '.' {
		return false
	}
	for _, c := range rest[len(rest)-14:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// shortRevision is the revision abbreviated the way git log --oneline
// shows it, with "+dirty" when the work tree was modified.
func (b buildInfo) shortRevision() string {
	r := b.Revision
	if len(r) > 7 {
		r = r[:7]
	}
	if r != "" && b.Modified {
		r += "+dirty"
	}
	return r
}

// Short is the version MCP clients see in serverInfo and the serve banner:
// the module version, or for a checkout build "devel+" and the revision, so
// two development builds can still be told apart.
func (b buildInfo) Short() string {
	if b.Version != "devel" {
		return b.Version
	}
	if r := b.shortRevision(); r != "" {
		return "devel+" + r
	}
	return "devel"
}

// String is the one line `agentapp --version` and `agentapp version` print,
// e.g. "agentapp v1.2.3 (abc1234 2026-12-01T10:00:00Z, go1.26.8 linux/amd64)".
func (b buildInfo) String() string {
	var vcs []string
	if r := b.shortRevision(); r != "" {
		vcs = append(vcs, r)
	}
	if b.Time != "" {
		vcs = append(vcs, b.Time)
	}
	detail := fmt.Sprintf("%s %s/%s", b.GoVersion, b.OS, b.Arch)
	if len(vcs) > 0 {
		detail = strings.Join(vcs, " ") + ", " + detail
	}
	return fmt.Sprintf("agentapp %s (%s)", b.Version, detail)
}

func newVersionCmd(info buildInfo) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print agentapp's version, VCS revision and Go version",
		Long: `version prints the module version of this binary ("devel" when built from a
checkout), the commit it was built from ("+dirty" when the work tree had
uncommitted changes), the commit time, and the Go version and platform.
--json prints the same as one JSON object, for scripts and bug reports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !asJSON {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
				return err
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(info)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build information as JSON")
	return cmd
}
