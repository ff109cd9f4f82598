package support_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/support"
)

// The environment that turns the test binary into a ticket-creating child
// process for TestTwoProcessesCreateTickets.
const (
	helperDirEnv   = "SUPPORT_TEST_HELPER_DIR"
	helperNameEnv  = "SUPPORT_TEST_HELPER_NAME"
	helperCountEnv = "SUPPORT_TEST_HELPER_COUNT"
	helperURLEnv   = "SUPPORT_TEST_HELPER_URL"
)

// TestHelperProcessCreateTickets is not a test of its own: run by
// TestTwoProcessesCreateTickets as a child process, it opens the shared data
// directory, prints READY, waits for its stdin to close (the start signal)
// and creates tickets, printing "TICKET <id>" for each. Run normally it
// returns at once.
func TestHelperProcessCreateTickets(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	if dir == "" {
		return
	}
	name := os.Getenv(helperNameEnv)
	n, err := strconv.Atoi(os.Getenv(helperCountEnv))
	if err != nil {
		t.Fatalf("bad %s: %v", helperCountEnv, err)
	}
	svc, _ := openService(t, dir)
	fmt.Println("READY")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		t.Fatalf("waiting for the start signal: %v", err)
	}
	ctx := agent.WithSession(context.Background(), name)
	for i := range n {
		tk := createTicket(t, svc, ctx, fmt.Sprintf("%s 工单 %d", name, i), "多进程并发创建")
		fmt.Println("TICKET", tk.TicketID)
	}
}

// child is one helper process and what it printed.
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	ready  chan struct{} // closed when the child printed READY
	done   chan struct{} // closed when its stdout reached EOF
	lines  []string      // stdout lines; read only after done
}

func startChild(t *testing.T, dir, name string, n int) *child {
	t.Helper()
	c := &child{name: name, ready: make(chan struct{}), done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcessCreateTickets$", "-test.count=1")
	c.cmd.Env = append(os.Environ(), helperDirEnv+"="+dir, helperNameEnv+"="+name, helperCountEnv+"="+strconv.Itoa(n))
	if storetest.Backend() == store.Postgres {
		c.cmd.Env = append(c.cmd.Env, helperURLEnv+"="+testDB(t, dir).URL)
	}
	c.cmd.Stderr = &c.stderr
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start helper process %s: %v", name, err)
	}
	go func() {
		defer close(c.done)
		readySent := false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			c.lines = append(c.lines, line)
			if line == "READY" && !readySent {
				close(c.ready)
				readySent = true
			}
		}
	}()
	return c
}

// wait closes the child's stdin (if still open), waits for it to exit and
// returns the ticket ids it printed.
func (c *child) wait(t *testing.T) []string {
	t.Helper()
	c.stdin.Close()
	<-c.done
	err := c.cmd.Wait()
	out := strings.Join(c.lines, "\n")
	if err != nil {
		t.Errorf("helper process %s failed: %v\nstdout:\n%s\nstderr:\n%s", c.name, err, out, c.stderr.String())
	}
	if strings.Contains(out+c.stderr.String(), "database is locked") {
		t.Errorf("helper process %s saw \"database is locked\":\n%s\n%s", c.name, out, c.stderr.String())
	}
	var ids []string
	for _, l := range c.lines {
		if id, ok := strings.CutPrefix(l, "TICKET "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

func TestTwoProcessesCreateTickets(t *testing.T) {
	const n = 25
	dir := t.TempDir()
	svc, st := openService(t, dir) // creates and migrates the database first

	children := []*child{startChild(t, dir, "child-1", n), startChild(t, dir, "child-2", n)}
	for _, c := range children {
		select {
		case <-c.ready:
		case <-c.done:
			// It exited before READY; wait reports why.
		}
	}
	for _, c := range children {
		c.stdin.Close() // start signal
	}

	var ids []string
	ctx := agent.WithSession(context.Background(), "parent")
	for i := range n {
		out, err := svc.CreateTicketTool().Execute(ctx, mustJSON(t, map[string]string{
			"subject": fmt.Sprintf("parent 工单 %d", i), "description": "多进程并发创建",
		}))
		if err != nil {
			t.Errorf("parent ticket %d: %v", i, err)
			continue
		}
		ids = append(ids, out.(support.Ticket).TicketID)
	}
	for _, c := range children {
		got := c.wait(t)
		if len(got) != n {
			t.Errorf("%s reported %d tickets, want %d", c.name, len(got), n)
		}
		ids = append(ids, got...)
	}

	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("ticket id %s handed out twice", id)
		}
		seen[id] = true
		var subject string
		if err := st.DB.QueryRow(`SELECT subject FROM support_tickets WHERE id = ?`, id).Scan(&subject); err != nil {
			t.Errorf("ticket %s reported but not stored: %v", id, err)
		}
	}
	if got := countRows(t, st, "support_tickets"); got != 3*n {
		t.Errorf("%d tickets stored, want %d", got, 3*n)
	}
	var maxSeq int
	if err := st.DB.QueryRow(`SELECT MAX(seq) FROM support_tickets`).Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	if maxSeq != 3*n {
		t.Errorf("highest sequence number %d, want %d", maxSeq, 3*n)
	}
}
