package mcpbench

import "syscall"

// sysProcAttr puts the server in a process group of its own (so the whole
// tree can be measured and killed) and has the kernel kill its leader if
// the harness dies without cleaning up.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
