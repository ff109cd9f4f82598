//go:build !unix

package supervise

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agentapp/agentapp/mcpconfig"
)

// setProcessGroup has no equivalent here: Windows has no process groups to
// signal (a job object would be needed), so only the direct child is killed.
func setProcessGroup(*exec.Cmd) {}

// resolveCommand returns the program and arguments to execute. A .cmd or
// .bat file (npx is npx.cmd on Windows) cannot be executed directly, so it
// is run as `cmd /c <file> args…`: cmd.exe is used for that one file only,
// never as a general shell, and arguments that cmd.exe would interpret
// (& | < > ^ % ! ") are refused rather than passed to it.
func resolveCommand(cfg *mcpconfig.Server) (string, []string, error) {
	path, err := exec.LookPath(cfg.Command)
	if err != nil {
		return "", nil, startError(cfg, err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".cmd", ".bat":
		for _, a := range cfg.Args {
			if strings.ContainsAny(a, "&|<>^%!\"\r\n") {
				return "", nil, fmt.Errorf("argument %q of %s contains a character that cmd.exe would interpret (& | < > ^ %% ! \"); .cmd/.bat servers are started through cmd /c, so such arguments are refused — call the underlying program directly instead", a, cfg.Command)
			}
		}
		// %ComSpec% is where Windows says its command interpreter is; it
		// locates cmd.exe, it does not configure us.
		comspec := os.Getenv("ComSpec")
		if comspec == "" {
			comspec = "cmd.exe"
		}
		return comspec, append([]string{"/c", path}, cfg.Args...), nil
	}
	return path, cfg.Args, nil
}

// terminate has no SIGTERM to send on Windows; the sequence goes on to kill.
func (p *Process) terminate() {}

// kill kills the direct child.
func (p *Process) kill() { _ = p.cmd.Process.Kill() }

// treeAlive: without process groups only the child is tracked.
func (p *Process) treeAlive() bool { return !p.HasExited() }

// startTime is not needed here.
func startTime(int) uint64 { return 0 }
