//go:build unix

package hooks

import (
	"os/exec"
	"syscall"
)

// setGroup starts the hook in a process group of its own and makes the
// cancellation kill the whole group, children included.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reap kills what is left of the hook's group once the hook has ended: a
// child it started in the background and that let go of its output would
// otherwise outlive it.
func reap(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
