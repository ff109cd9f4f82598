//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// startSetsidSleeper starts a copy of this program in sleeper mode as the
// leader of a new session, as a daemonising helper of a real server would:
// it is in no process group of the client's, so signalling the server's
// group does not reach it. It keeps our stderr, like a helper that logs.
func startSetsidSleeper(pidfile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-mode", "sleeper")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if pidfile != "" {
		if err := os.WriteFile(pidfile, fmt.Appendf(nil, "%d", cmd.Process.Pid), 0o644); err != nil {
			return err
		}
	}
	// Not waited for: the sleeper outlives us if nobody kills it.
	return cmd.Process.Release()
}
