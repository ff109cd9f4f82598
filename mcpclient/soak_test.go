//go:build linux

package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/agentapp/agentapp/internal/testkit"
	"go.uber.org/goleak"
)

// TestSoak connects, calls and closes a stdio server 300 times, then makes
// 100 calls through a server that crashes on every 10th call. Afterwards no
// process of any of them is left and the goroutines are back to where they
// were; every call either succeeded or failed with the crash error.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test; run without -short")
	}
	path := testServerPath(t) // built before the baseline is taken
	baseline := goleak.IgnoreCurrent()
	start := time.Now()
	ctx := context.Background()
	log := WithLogger(discardLogger())

	for i := range 300 {
		b, err := Connect(ctx, mcpconfig.Server{Name: "soak", Command: path}, log)
		if err != nil {
			t.Fatalf("cycle %d: connect: %v", i, err)
		}
		pgid := curConn(b).proc.Pgid()
		text := fmt.Sprintf("cycle %d", i)
		got, err := adExec(t, adTool(t, b, "echo"), `{"text":"`+text+`"}`)
		if err != nil || got != `{"echo":"`+text+`"}` {
			t.Fatalf("cycle %d: echo: %q, %v", i, got, err)
		}
		if err := b.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", i, err)
		}
		if left := testkit.LiveGroup(t, pgid); len(left) > 0 {
			t.Fatalf("cycle %d: processes left after Close: %v", i, left)
		}
	}
	cycles := time.Since(start)

	// The clock moves 30 s per call, so the crashes (one every 10 calls)
	// never exhaust the restart budget; the backoff sleeps are skipped.
	clock := newFakeClock()
	b, pidfile := crashyServer(t, 10, withRestartPolicy(clock.policy()), log)
	echo := adTool(t, b, "echo")
	var pgids []int
	ok, crashed := 0, 0
	for i := range 100 {
		_, pgid := serverIDs(t, pidfile)
		if len(pgids) == 0 || pgids[len(pgids)-1] != pgid {
			pgids = append(pgids, pgid)
		}
		text := fmt.Sprintf("call %d", i)
		got, err := adExec(t, echo, `{"text":"`+text+`"}`)
		var exitErr *serverExitError
		switch {
		case err == nil && got == `{"echo":"`+text+`"}`:
			ok++
		case errors.As(err, &exitErr) && strings.Contains(err.Error(), "exit status 7") && strings.Contains(err.Error(), "crashing on call 10"):
			crashed++
		default:
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
		clock.advance(30 * time.Second)
	}
	if ok != 90 || crashed != 10 {
		t.Errorf("%d calls succeeded and %d hit a crash; want 90 and 10", ok, crashed)
	}
	if err := b.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	for _, g := range pgids {
		if left := testkit.LiveGroup(t, g); len(left) > 0 {
			t.Errorf("processes of group %d left: %v", g, left)
		}
	}
	goleak.VerifyNone(t, baseline)
	t.Logf("300 connect-call-close cycles in %v; 100 calls with 10 crashes in %v", cycles, time.Since(start)-cycles)
}
