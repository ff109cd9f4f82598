package mcpclient

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
)

// setsidServer connects the test server in setsid mode and returns the
// bridge and the pid of the grandchild it started in a session of its own.
func setsidServer(t *testing.T, args ...string) (*Bridge, int) {
	t.Helper()
	pidfile := filepath.Join(t.TempDir(), "grandchild")
	cfg := mcpconfig.Server{Name: "setsid", Command: testServerPath(t),
		Args: append([]string{"-mode", "setsid", "-grandchild-pidfile", pidfile}, args...)}
	b, err := Connect(context.Background(), cfg, WithGracePeriods(500*time.Millisecond, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	bs, err := os.ReadFile(pidfile)
	if err != nil {
		b.Close()
		t.Fatalf("the server started no grandchild: %v", err)
	}
	pid, _ := strconv.Atoi(string(bs))
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	g, ok := testkit.ReadProc(pid)
	if !ok || g.PGID == curConn(b).proc.Pgid() {
		t.Fatalf("grandchild %v (found %v) is in the server's process group %d; the test needs one that left it", g, ok, curConn(b).proc.Pgid())
	}
	return b, pid
}

// TestCloseStopsSetsidGrandchild: a helper the server started with setsid
// (outside its process group) is stopped by Close, found through the
// process tree while the server runs.
func TestCloseStopsSetsidGrandchild(t *testing.T) {
	b, pid := setsidServer(t)
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if running(pid) {
		t.Errorf("the setsid grandchild %d outlived Close", pid)
	}
}

// TestCloseStopsOrphanOfCrashedServer: when the server crashed first, its
// helper was reparented away from it; Close still finds it, by the
// server id in its environment, and stops it.
func TestCloseStopsOrphanOfCrashedServer(t *testing.T) {
	b, pid := setsidServer(t, "-crash-every", "1")
	if _, err := adExec(t, adTool(t, b, "echo"), `{"text":"x"}`); err == nil {
		t.Fatal("the call that crashes the server succeeded")
	}
	if g, ok := testkit.ReadProc(pid); !ok || !g.Live() || g.PPID == curConn(b).proc.Pid() {
		t.Fatalf("grandchild after the crash: %v (found %v); want it alive and reparented", g, ok)
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if running(pid) {
		t.Errorf("the orphaned grandchild %d outlived Close", pid)
	}
}
