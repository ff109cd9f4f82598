package testkit

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The process-table helpers read Linux's /proc directly, independently of
// the code under test, so that a test can check that the processes it
// started (servers, their wrappers, their children) are gone. Call them
// only on Linux; elsewhere ReadProc finds nothing and Procs fails the test.

// Proc is one process of the process table, as /proc/PID/stat shows it.
type Proc struct {
	PID, PPID int
	PGID      int  // its process group
	State     byte // R, S, D, T, Z (zombie), X (dead), ...
}

// Live reports whether the process still runs: it is neither a zombie
// waiting to be reaped nor dead.
func (p Proc) Live() bool { return p.State != 'Z' && p.State != 'X' }

// Cmdline returns the process's command line, its arguments joined by
// spaces; "" if it has gone meanwhile.
func (p Proc) Cmdline() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// HasEnv reports whether the process's environment holds the entry kv
// ("NAME=value"). A process inherits its parent's environment, so a unique
// value set for a process under test also marks its descendants, even
// those reparented to init. It is false if the process has gone or its
// environment cannot be read.
func (p Proc) HasEnv(kv string) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
	return bytes.HasPrefix(b, []byte(kv+"\x00")) || bytes.Contains(b, []byte("\x00"+kv+"\x00"))
}

// String describes the process for failure messages.
func (p Proc) String() string {
	return fmt.Sprintf("%d %q state %c", p.PID, p.Cmdline(), p.State)
}

// ReadProc reads process pid from /proc; ok is false when there is no such
// process (any more).
func ReadProc(pid int) (p Proc, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, false
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and
	// parentheses, so the fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) == 0 {
		return Proc{}, false
	}
	p = Proc{PID: pid, State: f[0][0]}
	p.PPID, _ = strconv.Atoi(string(f[1]))
	p.PGID, _ = strconv.Atoi(string(f[2]))
	return p, true
}

// Procs returns every process of the process table, zombies included. It
// fails the test if /proc cannot be read.
func Procs(t testing.TB) []Proc {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("reading the process table: %v", err)
	}
	var procs []Proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		if p, ok := ReadProc(pid); ok { // else it ended meanwhile
			procs = append(procs, p)
		}
	}
	return procs
}

// LiveGroup returns the live members of process group pgid.
func LiveGroup(t testing.TB, pgid int) []Proc {
	t.Helper()
	var members []Proc
	for _, p := range Procs(t) {
		if p.PGID == pgid && p.Live() {
			members = append(members, p)
		}
	}
	return members
}

// WaitGone waits until process pid has left the process table (it exited
// and was reaped), failing the test after timeout. The process table sends
// no events, so it polls; the timeout only keeps a broken test from
// hanging.
func WaitGone(t testing.TB, pid int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if _, ok := ReadProc(pid); !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still in the process table after %v", pid, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
