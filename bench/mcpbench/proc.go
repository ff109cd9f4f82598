package mcpbench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100
// on every Linux architecture Go supports (sysconf(_SC_CLK_TCK) would need
// cgo to ask). CPU times are therefore 10 ms grained; the harness measures
// over thousands of calls so that the grain is a small fraction.
const clockTick = 10 * time.Millisecond

// ProcStat holds the fields of /proc/<pid>/stat the harness uses.
type ProcStat struct {
	PID, PPID, PGRP int
	State           byte
	// UTime and STime are the process's own user and system CPU time;
	// CUTime and CSTime those of its children it has waited for.
	UTime, STime, CUTime, CSTime time.Duration
}

// CPU returns the process's user plus system time, with that of its
// reaped children.
func (s ProcStat) CPU() time.Duration { return s.UTime + s.STime + s.CUTime + s.CSTime }

// ParseStat parses the contents of /proc/<pid>/stat. The command name, in
// parentheses, may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func ParseStat(data []byte) (ProcStat, error) {
	var s ProcStat
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return s, errors.New("stat: no command name in parentheses")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return s, fmt.Errorf("stat: pid: %w", err)
	}
	s.PID = pid
	// Fields from the 3rd (state) on.
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 15 {
		return s, fmt.Errorf("stat: %d fields after the command name, want at least 15", len(f))
	}
	if len(f[0]) != 1 {
		return s, fmt.Errorf("stat: bad state %q", f[0])
	}
	s.State = f[0][0]
	ints := make([]int64, 15)
	for _, i := range []int{1, 2, 11, 12, 13, 14} {
		if ints[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return s, fmt.Errorf("stat: field %d: %w", i+3, err)
		}
	}
	s.PPID, s.PGRP = int(ints[1]), int(ints[2])
	s.UTime = time.Duration(ints[11]) * clockTick
	s.STime = time.Duration(ints[12]) * clockTick
	s.CUTime = time.Duration(ints[13]) * clockTick
	s.CSTime = time.Duration(ints[14]) * clockTick
	return s, nil
}

// ProcMem holds the memory fields of /proc/<pid>/status, in bytes.
type ProcMem struct {
	RSS, HWM int64 // VmRSS (resident now) and VmHWM (peak resident)
	// RSSAnon and RSSFile split VmRSS: anonymous memory (heap, stacks,
	// what the process allocated) and pages mapped from files (its
	// executable's code and read-only data, shared libraries), which the
	// kernel shares with the page cache and can drop and re-read.
	RSSAnon, RSSFile int64
}

// ParseStatus reads VmRSS, VmHWM, RssAnon and RssFile from the contents of
// /proc/<pid>/status. A zombie has none; that is not an error (all are 0).
func ParseStatus(data []byte) (ProcMem, error) {
	var m ProcMem
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.RSS
		case "VmHWM":
			dst = &m.HWM
		case "RssAnon":
			dst = &m.RSSAnon
		case "RssFile":
			dst = &m.RSSFile
		}
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("status: %s: unexpected %q", key, val)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("status: %s: %w", key, err)
		}
		*dst = n * 1024
	}
	return m, sc.Err()
}

// GroupSample is the sum over the live members of a process group.
type GroupSample struct {
	PIDs     []int
	Names    []string
	CPU      time.Duration
	RSS, HWM int64
	// RSSAnon and RSSFile split RSS as in ProcMem.
	RSSAnon, RSSFile int64
}

// procRoot is /proc; tests point it at a fake tree.
var procRoot = "/proc"

// SampleGroup sums CPU time and memory over every process whose process
// group is pgid. Processes that vanish while being read are skipped.
func SampleGroup(pgid int) (GroupSample, error) {
	var g GroupSample
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return g, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := procRoot + "/" + e.Name()
		raw, err := os.ReadFile(dir + "/stat")
		if err != nil {
			continue // gone
		}
		st, err := ParseStat(raw)
		if err != nil || st.PGRP != pgid {
			continue
		}
		g.PIDs = append(g.PIDs, pid)
		g.Names = append(g.Names, commName(raw))
		g.CPU += st.CPU()
		if raw, err := os.ReadFile(dir + "/status"); err == nil {
			if m, err := ParseStatus(raw); err == nil {
				g.RSS += m.RSS
				g.HWM += m.HWM
				g.RSSAnon += m.RSSAnon
				g.RSSFile += m.RSSFile
			}
		}
	}
	if len(g.PIDs) == 0 {
		return g, fmt.Errorf("no live process in group %d", pgid)
	}
	return g, nil
}

func commName(stat []byte) string {
	open := bytes.IndexByte(stat, '(')
	end := bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return "?"
	}
	return string(stat[open+1 : end])
}
