package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineServer serves each session of srv on its own stdio transport
// (NewIOTransport, what `agentapp serve` speaks), the in-memory
// transport's messages carried to and from it as lines: the client sees
// what a stdio client of agentapp serve sees, notifications included.
type lineServer struct{ srv *mcpserver.Server }

func (l lineServer) Connect(ctx context.Context, t mcp.Transport, _ *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := l.srv.Connect(ctx, l.srv.NewIOTransport(inR, outW), nil)
	if err != nil {
		return nil, err
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		ss.Close()
		return nil, err
	}
	go func() { // client → server
		defer inW.Close()
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			b, err := jsonrpc.EncodeMessage(msg)
			if err != nil {
				return
			}
			if _, err := inW.Write(append(b, '\n')); err != nil {
				return
			}
		}
	}()
	go func() { // server → client
		defer conn.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if msg, err := jsonrpc.DecodeMessage(sc.Bytes()); err == nil {
				_ = conn.Write(context.Background(), msg)
			}
		}
	}()
	return ss, nil
}

// pollDecided is a TaskBackend of one task decided 50 ms after the
// client's first tasks/get (so its next poll is about a second away), and
// a TaskWaiter told of the decision as the database tells serve.
type pollDecided struct {
	mu      sync.Mutex
	status  string
	polls   int
	decided time.Time
	changed chan struct{}
}

func (b *pollDecided) TaskTools() []string { return []string{"hold"} }
func (b *pollDecided) taskLocked() *mcpserver.Task {
	t := &mcpserver.Task{ID: "task-1", Status: b.status, StatusMessage: "waiting for an operator",
		Created: time.Now(), Updated: time.Now(), TTL: time.Hour, PollInterval: 5 * time.Second}
	if b.status == "completed" {
		t.Output = "approved"
	}
	return t
}
func (b *pollDecided) StartTask(context.Context, string, string, json.RawMessage, time.Duration) (*mcpserver.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.status = "working"
	return b.taskLocked(), nil
}
func (b *pollDecided) Task(ctx context.Context, _, _ string) (*mcpserver.Task, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	// The server's own watcher reads with no caller; a client's poll
	// comes with one.
	if mcpserver.CallerFrom(ctx) != "" && b.status == "working" {
		if b.polls++; b.polls == 1 {
			time.AfterFunc(50*time.Millisecond, b.decide)
		}
	}
	return b.taskLocked(), nil
}
func (b *pollDecided) Tasks(ctx context.Context, caller string) ([]*mcpserver.Task, error) {
	return nil, nil
}
func (b *pollDecided) CancelTask(context.Context, string, string) (*mcpserver.Task, error) {
	return nil, mcpserver.ErrTaskEnded
}
func (b *pollDecided) WaitChange(ctx context.Context, d time.Duration) {
	select {
	case <-b.changed:
	case <-ctx.Done():
	case <-time.After(d):
	}
}
func (b *pollDecided) decide() {
	b.mu.Lock()
	b.status, b.decided = "completed", time.Now()
	b.mu.Unlock()
	close(b.changed)
}

// A task-status notification from the server (agentapp serve on stdio,
// at 2025-11-25) makes the client fetch the result at once, instead of
// at its next poll about a second later.
func TestTaskStatusNotificationWakesTheCall(t *testing.T) {
	b := &pollDecided{changed: make(chan struct{})}
	hold := &agent.Tool{Name: "hold", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "plain", nil }}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tools: []*agent.Tool{hold}, Tasks: b})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	br, err := ConnectInMemory(ctx, "serve", lineServer{srv})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = br.Close() })
	out, err := execWithin(t, ctx, adTool(t, br, "hold"), `{}`)
	ended := time.Now()
	if err != nil || !strings.Contains(out, "approved") {
		t.Fatalf("the call: %q, %v", out, err)
	}
	b.mu.Lock()
	took := ended.Sub(b.decided)
	b.mu.Unlock()
	t.Logf("from the decision to the call's end: %v", took)
	if took > 500*time.Millisecond {
		t.Errorf("the call ended %v after the decision; the notification should end its wait at once (its next poll was about 1 s away)", took)
	}
}
