//go:build unix

package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/store"
	"github.com/creack/pty"
	"go.uber.org/goleak"
)

// ptyHelperEnv makes the test binary run a real chat on its own terminal
// instead of the tests: the pseudo-terminal test starts it as a child whose
// controlling terminal is the pty, so Ctrl-C typed during a turn becomes a
// real SIGINT, exactly as for a user.
const ptyHelperEnv = "AGENTAPP_CHAT_PTY_HELPER"

// ptyConfirmEnv, set to a duration, gives the helper chat an MCP server
// "shop" whose tool refund needs confirmation (AGENT_GUARD_CONFIRM), with
// that long to answer.
const ptyConfirmEnv = "AGENTAPP_CHAT_PTY_CONFIRM"

func TestMain(m *testing.M) {
	if os.Getenv(ptyHelperEnv) == "1" {
		os.Exit(ptyHelper())
	}
	// goleak fails the run if a test leaves a goroutine behind: a turn's
	// interrupt watcher, a spinner or a server left open is a leak.
	goleak.VerifyTestMain(m)
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
	hp := hostParts{
		Model: &ruleModel{},
		Local: []*agent.Tool{slow, constTool("getOrderStatus", "", "shipped")},
		Store: st,
	}
	cfg := Config{
		In:          os.Stdin,
		Out:         os.Stdout,
		Err:         os.Stderr,
		Interrupt:   intr,
		HistoryFile: filepath.Join(dir, "history"),
	}
	if v := os.Getenv(ptyConfirmEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 3
		}
		hp.Servers = []host.Server{&fakeServer{name: "shop", tools: []*agent.Tool{constTool("refund", "shop", "refunded")}}}
		hp.Guards = &guard.Config{Confirm: []string{"refund"}}
		cfg.confirmTimeout = d
	}
	hp.Servers = append(hp.Servers, ptyCatalogs()...) // ux_pty_test.go
	if bin := os.Getenv(ptyEverythingEnv); bin != "" {
		b, cs, err := ptyEverything(bin, os.Getenv(ptyWireLogEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 3
		}
		hp.Servers = []host.Server{b}
		cfg.ClientSide = cs
	}
	hh, err := openHost(&hp, cfg.Hints.Host, nil, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	cfg.Host = hh
	c, err := New(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 3
	}
	defer c.Close()
	if q := os.Getenv(ptyAskEnv); q != "" { // ux_pty_test.go
		if err := c.Ask(context.Background(), q, false); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		return 0
	}
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

	out  testkit.SyncBuffer // what the child printed
	mark int                // expect looks at output after this offset
	eof  chan struct{}      // closed when out has all of it
}

func startTerminal(t *testing.T, dataDir string, env ...string) *terminal {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ptyHelperEnv+"=1", "AGENTAPP_DATA_DIR="+dataDir, "TERM=xterm")
	cmd.Env = append(cmd.Env, env...)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, ptmx: ptmx, cmd: cmd, eof: make(chan struct{})}
	go func() {
		defer close(term.eof)
		_, _ = io.Copy(&term.out, ptmx) // until the child has exited and the pty reads fail
		term.out.Close()
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
	i := -1
	out, err := term.out.Wait(20*time.Second, func(out string) bool {
		i = strings.Index(out[term.mark:], s)
		return i >= 0
	})
	if err != nil {
		term.t.Fatalf("no %q in the output (%v):\n%s", s, err, out)
	}
	term.mark += i + len(s)
}

// notSeen reports whether s has not been printed since the mark.
func (term *terminal) notSeen(s string) bool {
	return !strings.Contains(term.out.String()[term.mark:], s)
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

// TestPTYConfirmationTimeout: a confirmation question that times out
// does not stay on the screen as the prompt. The question stays above, a
// line of its own says that it timed out and the call was refused, and the
// chat prompt is drawn again, so what the user types next is plainly a
// chat message: it is answered as one, and the question is never drawn
// again around it.
func TestPTYConfirmationTimeout(t *testing.T) {
	term := startTerminal(t, t.TempDir(), ptyConfirmEnv+"=300ms")
	term.expect("Type a message.")
	term.expect("> ")
	term.send("please call:refund now\r")
	question := `Allow tool refund (server shop) with {"q":"x"}? [y once/a session/N/?]`
	term.expect(question)
	term.expect("no answer within 300ms: refused")
	// The turn goes on with the refusal; then the prompt is drawn again
	// below the answer.
	term.expect(`tool said: {"denied":true`)
	term.expect("> ")
	reply := `tool said: {"denied":true,"reason":"the user did not approve the call to tool refund (server shop) (no answer within 300ms), so it was not called."}`
	refused := "✗ refund refused: the user did not approve the call to tool refund (server shop) (no answer within 300ms), so it was not called."
	term.screenEndsWith(question, "no answer within 300ms: refused", refused, reply, "", ">")

	term.send("hello")
	term.expect("hello")
	term.screenEndsWith(question, "no answer within 300ms: refused", refused, reply, "", "> hello")
	term.send("\r")
	term.expect("echo: hello")
	term.expect("> ")
	term.screenEndsWith(question, "no answer within 300ms: refused", refused, reply, "", "> hello", "echo: hello (5 messages)", "", ">")
	if n := strings.Count(strings.Join(render(term.output()), "\n"), "[y once/a session/N/?]"); n != 1 {
		t.Errorf("the screen shows the question %d times, want once", n)
	}
	term.send("/exit\r")
	term.expect("HELPER-EXIT")
	if err := term.wait(); err != nil {
		t.Fatalf("chat exited with %v", err)
	}
}

// output is everything the child printed.
func (term *terminal) output() string { return term.out.String() }

// screenEndsWith checks the last lines of the screen as the user sees it
// (trailing spaces and empty lines at the bottom ignored).
func (term *terminal) screenEndsWith(want ...string) {
	term.t.Helper()
	lines := render(term.output())
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) < len(want) || !slices.Equal(lines[len(lines)-len(want):], want) {
		term.t.Errorf("the screen does not end with\n%s\nscreen:\n%s", strings.Join(want, "\n"), strings.Join(lines, "\n"))
	}
}

// render plays terminal output onto a screen of unbounded height and
// width and returns its lines without trailing spaces: enough of a
// terminal for what the chat and the line editor write (CR, LF, BS, and
// the CSI sequences for cursor moves and erasing). Long lines do not wrap.
func render(out string) []string {
	var screen [][]rune
	row, col := 0, 0
	line := func() []rune {
		for len(screen) <= row {
			screen = append(screen, nil)
		}
		return screen[row]
	}
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			row++
		case r == '\b':
			col = max(col-1, 0)
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] >= '0' && rs[j] <= '9' || rs[j] == ';' || rs[j] == '?') {
				j++
			}
			if j == len(rs) {
				i = j
				break
			}
			n, err := strconv.Atoi(string(rs[i+2 : j]))
			if err != nil {
				n = 0
			}
			l := line()
			switch rs[j] {
			case 'A':
				row = max(row-max(n, 1), 0)
			case 'B':
				row += max(n, 1)
			case 'C':
				col += max(n, 1)
			case 'D':
				col = max(col-max(n, 1), 0)
			case 'K':
				switch n {
				case 0:
					screen[row] = l[:min(col, len(l))]
				case 1:
					for k := 0; k < min(col+1, len(l)); k++ {
						l[k] = ' '
					}
				case 2:
					screen[row] = nil
				}
			case 'J':
				if n == 0 {
					screen[row] = l[:min(col, len(l))]
					screen = screen[:row+1]
				}
			}
			i = j
		case r < ' ':
		default:
			l := line()
			for len(l) <= col {
				l = append(l, ' ')
			}
			l[col] = r
			screen[row] = l
			col++
		}
	}
	lines := make([]string, len(screen))
	for i, l := range screen {
		lines[i] = strings.TrimRight(string(l), " ")
	}
	return lines
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
