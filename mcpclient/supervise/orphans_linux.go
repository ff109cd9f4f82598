package supervise

import (
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2).
const prSetChildSubreaper = 36

var adoptOnce struct {
	sync.Once
	err error
}

// AdoptOrphans makes this process the child subreaper of everything it
// starts (Linux 3.4 and later): a process whose parent exits is then
// reparented to us instead of to init. A stdio server's helper that left
// its process group with setsid, and that the server left behind when it
// exited, thus stays our descendant; the bridges find it when they close
// (they look for it either way, see Bridge.Close), and this process reaps
// it once it has exited. Without AdoptOrphans such a helper still gets
// killed, but is reaped by init.
//
// AdoptOrphans also starts the reaper: a goroutine that, whenever a child
// exits, collects every exited child that no bridge waits for. That is why
// only a program whose child processes are all started by this package
// (or that waits for its other children some other way than os/exec) may
// call it: the reaper could take the exit status an exec.Cmd started
// elsewhere is waiting for. agentapp's main calls it.
//
// Call it once, early; later calls do nothing and return the first
// call's error. Elsewhere than on Linux it returns an error wrapping
// errors.ErrUnsupported, and bridges only stop process groups.
func AdoptOrphans() error {
	adoptOnce.Do(func() {
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
			adoptOnce.err = fmt.Errorf("becoming the child subreaper (prctl PR_SET_CHILD_SUBREAPER): %w", errno)
			return
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGCHLD)
		go func() {
			for range sig {
				reapOrphans()
			}
		}()
	})
	return adoptOnce.err
}

// reapOrphans collects every exited child of ours that no exec.Cmd of a
// bridge waits for: the orphans reparented to us.
func reapOrphans() {
	spawnMu.Lock()
	defer spawnMu.Unlock()
	table, _ := readProcTable()
	self := os.Getpid()
	for _, e := range table {
		if e.ppid != self || e.live() || spawned[e.pid] {
			continue
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(e.pid, &ws, syscall.WNOHANG, nil)
	}
}
