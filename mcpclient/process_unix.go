//go:build unix

package mcpclient

import (
	"os/exec"
	"syscall"

	"github.com/agentapp/agentapp/mcpconfig"
)

// setProcessGroup starts the child as the leader of a new process group.
//
// The incident this prevents: a server started through npx or a wrapper
// script is a grandchild of ours. Signalling only the direct child (as the
// SDK's CommandTransport does) kills npx or the shell and leaves the real
// server running, orphaned, holding its resources (ports, files, locks);
// these piled up across chat sessions. Signalling the whole group reaches
// every process the server spawned.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// resolveCommand returns the program and arguments to execute: the
// configured command itself, never a shell.
func resolveCommand(cfg *mcpconfig.Server) (string, []string, error) {
	if _, err := exec.LookPath(cfg.Command); err != nil && !hasPathSeparator(cfg.Command) {
		return "", nil, startError(cfg, err)
	}
	return cfg.Command, cfg.Args, nil
}

func hasPathSeparator(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

// terminate sends SIGTERM to the whole process group.
func (p *process) terminate() { _ = syscall.Kill(-p.pgid, syscall.SIGTERM) }

// kill sends SIGKILL to the whole process group.
func (p *process) kill() { _ = syscall.Kill(-p.pgid, syscall.SIGKILL) }

// groupAlive reports whether any process of the group is still running.
func (p *process) groupAlive() bool {
	if err := syscall.Kill(-p.pgid, 0); err == syscall.ESRCH {
		return false
	}
	return len(liveGroupMembers(p.pgid)) > 0
}
