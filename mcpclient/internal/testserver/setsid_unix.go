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

// startDaemon starts a helper the way a daemon hides: a child with an empty
// environment that starts a sleeper in a session of its own (setsid), also
// with an empty environment, writes its pid to pidfile and exits at once.
// The sleeper is then nobody's descendant but the subreaper's (or init's),
// and carries no variable of the client's.
func startDaemon(pidfile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-mode", "daemon-fork", "-grandchild-pidfile", pidfile)
	cmd.Env = []string{}
	cmd.Stderr = os.Stderr
	return cmd.Run()
}

// daemonFork is the middle process of startDaemon.
func daemonFork(pidfile string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-mode", "sleeper")
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := os.WriteFile(pidfile, fmt.Appendf(nil, "%d", cmd.Process.Pid), 0o644); err != nil {
		return err
	}
	return cmd.Process.Release()
}
