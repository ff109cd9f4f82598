package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/store/storetest"
)

// The official TypeScript SDK client (.ci/peers, its experimental tasks
// API) against agentapp serve: a refund task waits for an operator, who
// approves it over HTTP (agentapp web's operator API), and the client gets
// the decision; another client can neither read nor cancel it.

// tsSDK returns the TypeScript SDK's directory and node, or skips (fails
// in CI) when they are missing.
func tsSDK(t *testing.T) (sdk, node string) {
	t.Helper()
	sdk, err := filepath.Abs(filepath.Join("..", "..", ".ci", "peers", "node_modules", "@modelcontextprotocol", "sdk"))
	if err != nil {
		t.Fatal(err)
	}
	node, nerr := exec.LookPath("node")
	if _, err := os.Stat(filepath.Join(sdk, "package.json")); err != nil || nerr != nil {
		msg := "the TypeScript MCP SDK or node is not installed; run bash .ci/install-peers"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return sdk, node
}

// tsClient runs the script in one mode and returns its stdout lines as
// they come, and a function that waits for its end.
type tsClient struct {
	lines chan map[string]any
	done  chan error
	all   *testkit.SyncBuffer
}

func startTSClient(t *testing.T, endpoint, token string, args ...string) *tsClient {
	t.Helper()
	sdk, node := tsSDK(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "ts_tasks_client.mjs"), sdk, endpoint, token}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	all := &testkit.SyncBuffer{}
	cmd.Stderr = all
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &tsClient{lines: make(chan map[string]any, 100), done: make(chan error, 1), all: all}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fmt.Fprintln(all, sc.Text())
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
		c.done <- cmd.Wait()
	}()
	return c
}

// next returns the first line that has key, failing after a bound.
func (c *tsClient) next(t *testing.T, key string) map[string]any {
	t.Helper()
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				t.Fatalf("the TypeScript client ended without a %q line; its output:\n%s", key, c.all.String())
			}
			if _, ok := m[key]; ok {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q line from the TypeScript client within 2 minutes; its output:\n%s", key, c.all.String())
		}
	}
}

func (c *tsClient) wait(t *testing.T) {
	t.Helper()
	for range c.lines {
	}
	if err := <-c.done; err != nil {
		t.Fatalf("the TypeScript client failed: %v; its output:\n%s", err, c.all.String())
	}
}

// startOperatorWeb runs agentapp web on the database (its operator API
// with the token op) and returns its base URL.
func startOperatorWeb(t *testing.T, databaseURL string) string {
	t.Helper()
	cmd := exec.Command(agentappBin(t), "--database", databaseURL, "web", "--http", "127.0.0.1:0", "--model", "offline")
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir(), "AGENTAPP_WEB_TOKEN=op", "OPENAI_API_KEY=")
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	text := stderr.WaitFor(t, "operator:", 30*time.Second)
	m := regexp.MustCompile(`agentapp web on (http://[0-9.:]+)/`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("web printed no address:\n%s", text)
	}
	return m[1]
}

// approve approves a refund request through the operator API.
func approve(t *testing.T, web, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, web+"/operator/refunds/"+id+"/approve", strings.NewReader(`{"note":"approved in the test"}`))
	req.Header.Set("Authorization", "Bearer op")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"approved"`) {
		t.Fatalf("approving %s: %d %s", id, resp.StatusCode, body)
	}
}

// wantProbeRefused checks that another caller could not read or cancel
// the task, nor see it listed.
func wantProbeRefused(t *testing.T, endpoint, id string) {
	t.Helper()
	probe := startTSClient(t, endpoint, "bob", "probe", id)
	if m := probe.next(t, "getError"); !strings.Contains(fmt.Sprint(m["getError"]), "belongs to another caller") {
		t.Errorf("another client's tasks/get: %v", m)
	}
	if m := probe.next(t, "cancelError"); !strings.Contains(fmt.Sprint(m["cancelError"]), "belongs to another caller") {
		t.Errorf("another client's tasks/cancel: %v", m)
	}
	if m := probe.next(t, "list"); strings.Contains(fmt.Sprint(m), id) {
		t.Errorf("another client lists the task: %v", m)
	}
	probe.wait(t)
}

func TestTasksTypeScriptClientRefund(t *testing.T) {
	tsSDK(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "agentapp.db")
	endpoint := startReplica(t, db, "--token", "alice,bob")
	web := startOperatorWeb(t, db)

	run := startTSClient(t, endpoint, "alice", "run")
	if m := run.next(t, "capabilities"); !strings.Contains(fmt.Sprint(m), "call") {
		t.Fatalf("the server declares no tasks for tools/call: %v", m)
	}
	if m := run.next(t, "taskSupport"); m["taskSupport"] != "optional" {
		t.Fatalf("requestRefund's taskSupport: %v", m)
	}
	created := run.next(t, "created")
	id, _ := created["created"].(string)
	if id == "" || created["status"] != "working" || created["statusMessage"] != "waiting for an operator" {
		t.Fatalf("created: %v", created)
	}
	if m := run.next(t, "status"); m["status"] != "working" {
		t.Fatalf("polled: %v", m)
	}
	wantProbeRefused(t, endpoint, id)
	approve(t, web, id)
	res := run.next(t, "result")
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `\"status\":\"approved\"`) || !strings.Contains(string(b), "approved in the test") {
		t.Fatalf("result after approval: %s", b)
	}
	run.wait(t)
}

// With PostgreSQL and two replicas, the replica that created the task is
// killed; the other answers tasks/get and delivers the result.
func TestTasksReplicaFailover(t *testing.T) {
	tsSDK(t)
	db := storetest.NewPostgres(t)
	a, aProc := startReplicaProc(t, db.URL, "--token", "alice,bob")
	b := startReplica(t, db.URL, "--token", "alice,bob")
	web := startOperatorWeb(t, db.URL)

	create := startTSClient(t, a, "alice", "create")
	created := create.next(t, "created")
	id, _ := created["created"].(string)
	if id == "" || created["status"] != "working" {
		t.Fatalf("created: %v", created)
	}
	create.wait(t)
	if err := aProc.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = aProc.Wait()

	wantProbeRefused(t, b, id)
	approve(t, web, id)
	resume := startTSClient(t, b, "alice", "resume", id)
	res := resume.next(t, "result")
	if b, _ := json.Marshal(res); !strings.Contains(string(b), `\"status\":\"approved\"`) {
		t.Fatalf("result from the surviving replica: %s", b)
	}
	resume.wait(t)
}

// startReplicaProc is startReplica that also returns the process, for a
// test that kills it.
func startReplicaProc(t *testing.T, databaseURL string, extra ...string) (string, *exec.Cmd) {
	t.Helper()
	args := append([]string{"serve", "--http", "127.0.0.1:0", "--database", databaseURL}, extra...)
	cmd := exec.Command(agentappBin(t), args...)
	cmd.Env = append(os.Environ(), "AGENTAPP_DATA_DIR="+t.TempDir())
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	stderr := bufio.NewReader(stderrPipe)
	addrRE := regexp.MustCompile(`MCP server on (http://127\.0\.0\.1:[1-9][0-9]*/mcp)`)
	var banner strings.Builder
	for {
		line, err := stderr.ReadString('\n')
		banner.WriteString(line)
		if err != nil {
			t.Fatalf("replica printed no address: %v\n%s", err, banner.String())
		}
		if m := addrRE.FindStringSubmatch(line); m != nil {
			go io.Copy(io.Discard, stderr)
			return m[1], cmd
		}
	}
}

// A refund decided in agentapp web (another process on the same database)
// reaches the TypeScript SDK client as notifications/tasks/status on its
// session's GET stream, within a bound, though the client does not poll.
// On one SQLite data dir (serve's change counter wakes it) and over
// PostgreSQL (LISTEN/NOTIFY).
func TestTasksStatusNotification(t *testing.T) {
	tsSDK(t)
	t.Run("sqlite", func(t *testing.T) {
		testTaskStatusNotification(t, "sqlite:"+filepath.Join(t.TempDir(), "agentapp.db"))
	})
	t.Run("postgres", func(t *testing.T) { testTaskStatusNotification(t, storetest.NewPostgres(t).URL) })
}

func testTaskStatusNotification(t *testing.T, db string) {
	endpoint := startReplica(t, db, "--token", "alice")
	web := startOperatorWeb(t, db)
	c := startTSClient(t, endpoint, "alice", "notify")
	created := c.next(t, "created")
	id, _ := created["created"].(string)
	if id == "" || created["status"] != "working" {
		t.Fatalf("created: %v", created)
	}
	time.Sleep(300 * time.Millisecond) // the GET stream is open by now (it opens at initialize)
	start := time.Now()
	approve(t, web, id)
	m := c.next(t, "notified")
	took := time.Since(start)
	if m["notified"] != "completed" || m["taskId"] != id {
		t.Fatalf("notification: %v", m)
	}
	t.Logf("the decision reached the client as a notification in %v", took)
	if took > 2*time.Second {
		t.Errorf("the notification came %v after the decision, over 2 s", took)
	}
	c.wait(t)
}
