package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// A tool that runs as an MCP task reports each status change as an
// EventToolStatus of its call, between the call's start and its end.
func TestRunTaskStatusEvents(t *testing.T) {
	bin, err := filepath.Abs(filepath.Join("..", ".ci", "peers", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("server-everything is not installed; run bash .ci/install-peers")
		}
		t.Skip("server-everything is not installed; run bash .ci/install-peers (needs node and npm)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := mcpclient.Connect(ctx, mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}},
		mcpclient.WithGracePeriods(2*time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "simulate-research-query", map[string]string{"topic": "gophers"})}},
		scripted.Turn{Text: "done"},
	)
	h, err := newHost(ctx, config{Model: m, Servers: []Server{b}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var (
		mu     sync.Mutex
		kinds  []EventKind
		status []string
	)
	_, err = h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: "research gophers"}},
		OnEvent: func(ev Event) {
			mu.Lock()
			defer mu.Unlock()
			kinds = append(kinds, ev.Kind)
			if ev.Kind == EventToolStatus {
				if ev.Call.ID != "c1" || ev.Server != "everything" || ev.Step != 1 || ev.Status.Task == "" {
					t.Errorf("status event of call %q server %q step %d task %q; want call c1 of everything, step 1, with its task", ev.Call.ID, ev.Server, ev.Step, ev.Status.Task)
				}
				status = append(status, ev.Status.Status+": "+ev.Status.Message)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(status, "\n")
	for _, want := range []string{"working: Gathering sources...", "completed"} {
		if !strings.Contains(all, want) {
			t.Errorf("status events:\n%s\nwant one with %q", all, want)
		}
	}
	// Every status comes between the call's start and its end.
	first, last := -1, -1
	for i, k := range kinds {
		if k == EventToolStatus {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	start, end := slices.Index(kinds, EventToolStart), slices.Index(kinds, EventToolEnd)
	if first < 0 || start < 0 || end < 0 || first < start || last > end {
		t.Errorf("events %v: want the statuses between tool_start and tool_end", kinds)
	}
}
