//go:build unix

package supervise

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

// terminate sends SIGTERM to the whole process group and the strays.
func (p *Process) terminate() { p.signal(syscall.SIGTERM) }

// kill sends SIGKILL to the whole process group and the strays.
func (p *Process) kill() { p.signal(syscall.SIGKILL) }

// signal sends sig to the server's process group and to each of its
// strays (see scan), found afresh: a helper may have started since the
// last look.
func (p *Process) signal(sig syscall.Signal) {
	_ = syscall.Kill(-p.pgid, sig)
	_, strays := p.scan()
	for _, pid := range strays {
		_ = syscall.Kill(pid, sig)
	}
}

// treeAlive reports whether any process of the group, or any stray, is
// still running.
func (p *Process) treeAlive() bool {
	group, strays := p.scan()
	return group || len(strays) > 0
}
