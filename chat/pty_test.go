//go:build unix

package chat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
	"github.com/creack/pty"
)

// ptyHelperEnv makes the test binary run a real chat on its own terminal
// instead of the tests: the pseudo-terminal test starts it as a child whose
// controlling terminal is the pty, so Ctrl-C typed during a turn becomes a
// real SIGINT, exactly as for a user.
const ptyHelperEnv = "AGENTAPP_CHAT_PTY_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(ptyHelperEnv) == "1" {
		os.Exit(ptyHelper())
	}
	os.Exit(m.Run())
}

// ptyHelper is the child: a chat on stdin/stdout/stderr (the pty), with
// SIGINT relayed as agentapp chat does, the rule model, and a slow tool
// that reports on stderr when it starts and when its context is cancelled.
func ptyHelper() int {
	dir := os.Getenv("AGENTAPP_DATA_DIR")
	st, err := store.Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	defer st.Close()
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	slow := testTool("slowTool", "", func(ctx context.Context) (any, error) {
		fmt.Fprintln(os.Stderr, "SLOW-STARTED")
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "SLOW-CANCELLED:", ctx.Err())
		return nil, ctx.Err()
	})
	c, err := New(context.Background(), Config{
		Model:       &ruleModel{},
		Local:       []*agent.Tool{slow, constTool("getOrderStatus", "", "shipped")},
		Store:       st,
		In:          os.Stdin,
		Out:         os.Stdout,
		Err:         os.Stderr,
		Interrupt:   intr,
		HistoryFile: filepath.Join(dir, "history"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	defer c.Close()
	if err := c.Run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Fprintln(os.Stdout, "HELPER-EXIT")
	return 0
}

// terminal drives a child through its pty and collects what it prints.
type terminal struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd

	mu   sync.Mutex
	buf  bytes.Buffer
	mark int // expect looks at output after this offset
	more chan struct{}
	eof  chan struct{}
}

func startTerminal(t *testing.T, dataDir string) *terminal {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ptyHelperEnv+"=1", "AGENTAPP_DATA_DIR="+dataDir, "TERM=xterm")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, ptmx: ptmx, cmd: cmd, more: make(chan struct{}, 1), eof: make(chan struct{})}
	go func() {
		defer close(term.eof)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			if n > 0 {
				term.mu.Lock()
				term.buf.Write(b[:n])
				term.mu.Unlock()
				select {
				case term.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		ptmx.Close()
	})
	return term
}

// expect waits until s appears in the output after the mark, then moves
// the mark past it. The deadline only keeps a broken chat from hanging the
// test run; nothing is asserted about timing.
func (term *terminal) expect(s string) {
	term.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		term.mu.Lock()
		out := term.buf.String()
		i := strings.Index(out[term.mark:], s)
		if i >= 0 {
			term.mark += i + len(s)
		}
		term.mu.Unlock()
		if i >= 0 {
			return
		}
		select {
		case <-term.more:
		case <-term.eof:
			term.mu.Lock()
			out = term.buf.String()
			if strings.Contains(out[term.mark:], s) {
				term.mu.Unlock()
				continue
			}
			term.mu.Unlock()
			term.t.Fatalf("the chat ended before printing %q; output:\n%s", s, out)
		case <-deadline:
			term.t.Fatalf("no %q in the output:\n%s", s, out)
		}
	}
}

// notSeen reports whether s has not been printed since the mark.
func (term *terminal) notSeen(s string) bool {
	term.mu.Lock()
	defer term.mu.Unlock()
	return !strings.Contains(term.buf.String()[term.mark:], s)
}

func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.ptmx, s); err != nil {
		term.t.Fatal(err)
	}
}

func (term *terminal) wait() error {
	err := term.cmd.Wait()
	<-term.eof
	return err
}

func TestPTYHistoryToolsCtrlCAndExit(t *testing.T) {
	dir := t.TempDir()
	term := startTerminal(t, dir)
	term.expect("Type a message.")
	term.expect("> ")

	term.send("hello pty\r")
	term.expect("echo: hello pty (1 messages)")
	term.expect("> ")

	// Up arrow recalls the last line; Enter sends it again.
	term.send("\x1b[A")
	term.expect("hello pty")
	term.send("\r")
	term.expect("echo: hello pty (3 messages)")
	term.expect("> ")

	term.send("/tools\r")
	term.expect("slowTool        local")
	term.expect("getOrderStatus  local")
	term.expect("> ")

	// Ctrl-C while the slow tool runs cancels the turn, the tool included,
	// and the prompt comes back.
	term.send("please call:slowTool now\r")
	term.expect("SLOW-STARTED")
	// The loop abandons a cancelled tool rather than waiting for it, so
	// the tool's note and the chat's may come in either order.
	term.send("\x03")
	start := term.mark
	term.expect("^C turn cancelled")
	term.expect("> ")
	prompt := term.mark
	term.mark = start
	term.expect("SLOW-CANCELLED: context canceled")
	term.mark = prompt

	// Ctrl-C on a typed line discards the line and stays.
	term.send("discard me")
	term.expect("discard me")
	term.send("\x03")
	term.expect("> ")
	term.send("after\r")
	// The cancelled and discarded messages were neither stored nor sent.
	term.expect("echo: after (5 messages)")
	term.expect("> ")

	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	if !strings.Contains(readFile(t, filepath.Join(dir, "history")), "hello pty") {
		t.Error("the line history was not saved")
	}
}

func TestPTYCtrlCAtEmptyPromptExits(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("Type a message.")
	term.expect("> ")
	term.send("\x03")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
	if !term.notSeen("echo:") {
		t.Error("the model was called")
	}
}

func TestPTYEOFExits(t *testing.T) {
	term := startTerminal(t, t.TempDir())
	term.expect("> ")
	term.send("\x04")
	term.expect("HELPER-EXIT")
	var ee *exec.ExitError
	if err := term.wait(); errors.As(err, &ee) || err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
