package mcpclient

import (
	"bytes"
	"os"
	"strconv"
)

// liveGroupMembers returns the pids of the processes in process group pgid
// that are not zombies. kill(-pgid, 0) alone is not enough: an orphaned
// grandchild that has exited stays a zombie wherever PID 1 does not reap
// (common in containers), and it must not count as a survivor.
func liveGroupMembers(pgid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{pgid} // cannot tell: assume alive, the caller escalates
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name, which is in parentheses and may
		// itself contain spaces or parentheses: state ppid pgrp …
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 3 || f[0][0] == 'Z' || f[0][0] == 'X' {
			continue
		}
		if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids
}
