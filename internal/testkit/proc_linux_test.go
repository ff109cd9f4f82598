package testkit

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadProcSelf(t *testing.T) {
	p, ok := ReadProc(os.Getpid())
	if !ok {
		t.Fatal("ReadProc does not find the test process")
	}
	if p.PID != os.Getpid() || p.PPID != os.Getppid() || p.PGID != syscall.Getpgrp() || !p.Live() {
		t.Errorf("ReadProc(self) = %+v; want pid %d, ppid %d, pgid %d, live", p, os.Getpid(), os.Getppid(), syscall.Getpgrp())
	}
	if !strings.Contains(p.Cmdline(), os.Args[0]) {
		t.Errorf("Cmdline = %q, want it to hold %q", p.Cmdline(), os.Args[0])
	}
	if _, ok := ReadProc(-1); ok {
		t.Error("ReadProc found process -1")
	}
}

// TestProcsFollowAChild starts a child in a process group of its own and
// follows it through the table: live, then a zombie once killed, then gone
// once reaped.
func TestProcsFollowAChild(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	const marker = "TESTKIT_MARKER=follow-a-child"
	cmd := exec.Command(sleep, "60")
	cmd.Env = append(os.Environ(), marker)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})

	var found *Proc
	for _, p := range Procs(t) {
		if p.PID == pid {
			found = &p
		}
	}
	if found == nil {
		t.Fatalf("Procs does not list the child %d", pid)
	}
	if found.PPID != os.Getpid() || found.PGID != pid || !found.Live() {
		t.Errorf("child = %+v; want ppid %d, its own group, live", *found, os.Getpid())
	}
	if !found.HasEnv(marker) || found.HasEnv("TESTKIT_MARKER=follow") || found.HasEnv("ESTKIT_MARKER=follow-a-child") {
		t.Errorf("HasEnv does not match whole entries of the child's environment")
	}
	if got := found.Cmdline(); got != sleep+" 60" {
		t.Errorf("Cmdline = %q", got)
	}
	if !strings.Contains(found.String(), "sleep 60") {
		t.Errorf("String = %q", found.String())
	}
	if g := LiveGroup(t, pid); len(g) != 1 || g[0].PID != pid {
		t.Errorf("LiveGroup = %v, want the child alone", g)
	}

	// Killed but not yet reaped: a zombie, still in the table, not live.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for p, ok := ReadProc(pid); ok && p.Live(); p, ok = ReadProc(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the killed child never became a zombie")
		}
		time.Sleep(time.Millisecond)
	}
	if p, ok := ReadProc(pid); !ok || p.State != 'Z' {
		t.Errorf("killed, unreaped child = %+v, %v; want a zombie", p, ok)
	}
	if g := LiveGroup(t, pid); len(g) != 0 {
		t.Errorf("LiveGroup lists the zombie: %v", g)
	}
	cmd.Wait()
	WaitGone(t, pid, time.Minute)
}

func TestWaitGoneTimesOut(t *testing.T) {
	msg := failure(t, func(tb testing.TB) { WaitGone(tb, os.Getpid(), 20*time.Millisecond) })
	if !strings.Contains(msg, "still in the process table") {
		t.Errorf("WaitGone on a live process: failure %q", msg)
	}
}
