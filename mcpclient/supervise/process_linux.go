package supervise

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// procEntry is one process of the process table, as /proc/PID/stat shows
// it.
type procEntry struct {
	pid, ppid, pgrp int
	state           byte
	start           uint64 // start time, in clock ticks since boot
}

func (e procEntry) live() bool { return e.state != 'Z' && e.state != 'X' }

// readProcEntry reads /proc/PID/stat.
func readProcEntry(pid int) (procEntry, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procEntry{}, false
	}
	// The fields after the command name, which is in parentheses and may
	// itself hold spaces or parentheses: state (3) ppid pgrp session tty
	// tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
	// priority nice threads itrealvalue starttime (22).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procEntry{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) == 0 {
		return procEntry{}, false
	}
	e := procEntry{pid: pid, state: f[0][0]}
	e.ppid, _ = strconv.Atoi(string(f[1]))
	e.pgrp, _ = strconv.Atoi(string(f[2]))
	e.start, _ = strconv.ParseUint(string(f[19]), 10, 64)
	return e, true
}

// readProcTable reads every process of the process table; ok is false
// when /proc cannot be read.
func readProcTable() (table []procEntry, ok bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, d := range ents {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if e, ok := readProcEntry(pid); ok { // else it ended meanwhile
			table = append(table, e)
		}
	}
	return table, true
}

// startTime returns the start time of process pid, 0 if it cannot be read.
func startTime(pid int) uint64 {
	e, _ := readProcEntry(pid)
	return e.start
}

// scan reports whether any process of the server's process group still
// runs, and which other processes belong to the server: its strays.
//
// A process group does not hold everything a server starts: a helper that
// calls setsid (a daemon, a language server it spawns, a detached browser)
// leads a session and a group of its own, and group signals miss it. A
// process is a stray of the server when it is not in the server's group
// and
//   - it descends from the server's process while that still runs, or
//   - its environment holds the server's serverIDEnv value, which every
//     process the server starts inherits unless it clears it; that finds
//     the helpers after the server exited and they were reparented (to
//     init, or to this process when AdoptOrphans made it their subreaper),
//     or
//   - it descends from such a process.
//
// Only processes that started no earlier than the server are looked at
// for the environment value, each once, so that the poll of the close
// sequence stays cheap. Zombies do not count: they have exited and wait to
// be reaped by their parent.
//
// kill(-pgid, 0) alone is not enough for the group either: an orphaned
// member that exited stays a zombie wherever PID 1 does not reap (common
// in containers), and it must not count as a survivor.
func (p *Process) scan() (groupLive bool, strays []int) {
	groupGone := syscall.Kill(-p.pgid, 0) == syscall.ESRCH
	table, ok := readProcTable()
	if !ok {
		return !groupGone, nil // cannot tell: assume alive, the caller escalates
	}
	self := os.Getpid()
	children := map[int][]int{}
	byPID := make(map[int]procEntry, len(table))
	for _, e := range table {
		children[e.ppid] = append(children[e.ppid], e.pid)
		byPID[e.pid] = e
	}
	member := map[int]bool{}
	add := func(root int) {
		stack := []int{root}
		for len(stack) > 0 {
			pid := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if member[pid] || pid == self {
				continue
			}
			member[pid] = true
			stack = append(stack, children[pid]...)
		}
	}
	if e, ok := byPID[p.pid]; ok && e.start == p.start && e.live() {
		add(p.pid)
	}
	for _, e := range table {
		if e.pid == self || member[e.pid] || !e.live() || e.start < p.start {
			continue
		}
		if p.carriesID(e) {
			add(e.pid)
		}
	}
	p.addAdopted(table, self, member, add)
	for _, e := range table {
		if !e.live() {
			continue
		}
		switch {
		case e.pgrp == p.pgid:
			groupLive = groupLive || !groupGone
		case member[e.pid]:
			strays = append(strays, e.pid)
		}
	}
	return groupLive, strays
}

// addAdopted adds to the server's strays the orphans this process adopted
// as child subreaper (see AdoptOrphans) that nothing else ties to a server:
// a helper that forked twice, so that its parent exited at once, called
// setsid and cleared its environment is our child, outside every server's
// tree and without the serverIDEnv value. Which server it came from cannot
// be told, so they are counted only when no other server of ours runs:
// with one server they go with it, with several with the last one stopped
// (at the latest when the host exits). An orphan in our own process group
// was started by a child of ours that is not a server (a browser opened
// for a login, say) and is left alone.
func (p *Process) addAdopted(table []procEntry, self int, member map[int]bool, add func(int)) {
	spawnMu.Lock()
	others := 0
	for pid := range spawned {
		if pid != p.pid {
			others++
		}
	}
	ours := make(map[int]bool, len(spawned))
	for pid := range spawned {
		ours[pid] = true
	}
	spawnMu.Unlock()
	if others > 0 {
		return
	}
	own := syscall.Getpgrp()
	for _, e := range table {
		if e.ppid == self && e.live() && !member[e.pid] && !ours[e.pid] && e.pgrp != own && e.pgrp != p.pgid {
			add(e.pid)
		}
	}
}

// carriesID reports whether process e's environment holds the server's
// serverIDEnv value. The answer is kept per process (pid and start time):
// an environment does not change unless the process executes another
// program, which a helper hiding from us could do anyway.
func (p *Process) carriesID(e procEntry) bool {
	p.idMu.Lock()
	defer p.idMu.Unlock()
	key := [2]uint64{uint64(e.pid), e.start}
	if v, ok := p.idSeen[key]; ok {
		return v
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(e.pid) + "/environ")
	kv := []byte(serverIDEnv + "=" + p.serverID + "\x00")
	v := err == nil && (bytes.HasPrefix(b, kv) || bytes.Contains(b, append([]byte{0}, kv...)))
	if err == nil || !os.IsNotExist(err) {
		// A process of another user cannot be read, and is not ours.
		if p.idSeen == nil {
			p.idSeen = map[[2]uint64]bool{}
		}
		p.idSeen[key] = v
	}
	return v
}
