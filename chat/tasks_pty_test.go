//go:build unix

package chat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
)

// ptyEverythingEnv, set to server-everything's path, gives the helper
// chat that server, connected the way agentapp chat connects it (its
// sampling, elicitation and progress go to the chat). ptyWireLogEnv, when
// set, is a file that gets a copy of every message the chat sends the
// server, so the test can tell what the server saw.
const (
	ptyEverythingEnv = "AGENTAPP_CHAT_PTY_EVERYTHING"
	ptyWireLogEnv    = "AGENTAPP_CHAT_PTY_WIRELOG"
)

func ptyEverything(bin, wireLog string) (*mcpclient.Bridge, *ClientSide, error) {
	cfg := mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}}
	if wireLog != "" {
		// tee copies the server's stdin; the server ends when it does.
		cfg = mcpconfig.Server{Name: "everything", Command: "sh",
			Args: []string{"-c", `tee -a "$1" | exec "$2" stdio`, "sh", wireLog, bin}}
	}
	cs := &ClientSide{}
	opts := append(cs.ConnectOptions(0), mcpclient.WithGracePeriods(2*time.Second, 2*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := mcpclient.Connect(ctx, cfg, opts...)
	return b, cs, err
}

// TestPTYTaskStagesFormAndCtrlC runs server-everything's
// simulate-research-query (a tool that runs only as an MCP task) from the
// chat: each stage shows as a line while it runs; with ambiguous: true the
// task's question (input_required) is answered through the chat's form and
// the answer reaches the report; Ctrl-C cancels the turn and the task, and
// the server is sent tasks/cancel.
func TestPTYTaskStagesFormAndCtrlC(t *testing.T) {
	bin := everythingBin(t)
	dir := t.TempDir()
	wire := filepath.Join(dir, "wire.log")
	term := startTerminal(t, dir, ptyEverythingEnv+"="+bin, ptyWireLogEnv+"="+wire)
	term.expect("Type a message.")
	term.expect("> ")

	term.send(`please call:simulate-research-query {"topic":"gophers"}` + "\r")
	term.expect("⋯ simulate-research-query working: Gathering sources")
	from := term.mark
	term.expect("⋯ simulate-research-query completed")
	// The chat polls at the server's advised interval (1 s), the length of
	// a stage, so a poll may fall past a whole stage: the stages shown must
	// come in the server's order, not all of them.
	checkStageOrder(t, term.out.String()[from:term.mark])
	term.expect("Research Report: gophers")
	term.expect("> ")

	term.send(`please call:simulate-research-query {"topic":"python","ambiguous":true}` + "\r")
	term.expect("⋯ simulate-research-query input_required")
	term.expect("Python snake species")
	term.expect(": ")
	term.send("2\r")
	term.expect("[Y/n]")
	term.send("\r") // send the answer
	term.expect("Research Report: python (snake)")
	term.expect("> ")

	term.send(`please call:simulate-research-query {"topic":"cancel me"}` + "\r")
	term.expect("⋯ simulate-research-query working")
	term.send("\x03")
	term.expect("^C turn cancelled")
	term.expect("> ")
	// The cancel goes out as the turn ends; the copy of the wire is read
	// until it shows, within a bound.
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(wire)
		if strings.Contains(string(b), `"method":"tasks/cancel"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was never sent tasks/cancel; it got:\n%s", b)
		}
		time.Sleep(50 * time.Millisecond)
	}

	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}
