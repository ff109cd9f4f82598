package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpclient"
)

// A server's progress replaces the running spinner's label ("tool 3/5"),
// escaped; a spinner that was halted (a question is on the screen) stays
// halted.
func TestProgressRelabelsTheSpinner(t *testing.T) {
	out := &testkit.SyncBuffer{}
	s := &spinner{w: out}
	c := &Chat{}
	c.spin.Store(s)
	cs := &ClientSide{}
	cs.chat.Store(c)
	var traced []string
	cs.OnProgress = func(p mcpclient.Progress) { traced = append(traced, p.String()) }

	s.start("running trigger-long-running-operation…")
	cs.progress(mcpclient.Progress{Server: "everything", Tool: "trigger-long-running-operation", Progress: 3, Total: 5})
	out.WaitFor(t, "trigger-long-running-operation 3/5", 5*time.Second)
	cs.progress(mcpclient.Progress{Server: "everything", Tool: "evil\x1b[2J", Progress: 1})
	out.WaitFor(t, `evil\x1b[2J 1`, 5*time.Second)
	s.halt()
	n := len(out.String())
	cs.progress(mcpclient.Progress{Server: "everything", Tool: "t", Progress: 4, Total: 5})
	time.Sleep(250 * time.Millisecond)
	if strings.Contains(out.String()[n:], "t 4/5") {
		t.Error("progress restarted a halted spinner")
	}
	if len(traced) != 3 || traced[0] != "trigger-long-running-operation 3/5" {
		t.Errorf("OnProgress got %q", traced)
	}
	if strings.Contains(out.String(), "\x1b[2J") {
		t.Error("a terminal escape from the server reached the spinner line")
	}
}
