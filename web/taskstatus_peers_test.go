package web

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// A tool call that runs as an MCP task (server-everything's
// simulate-research-query) shows its task's stages as "status" events of
// its step, between the step's "running" and its end.
func TestTaskStatusEvents(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := mcpclient.Connect(ctx, mcpconfig.Server{Name: "everything", Command: bin, Args: []string{"stdio"}},
		mcpclient.WithGracePeriods(2*time.Second, 2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("r1", "simulate-research-query", map[string]string{"topic": "gophers"})}},
		scripted.Turn{Text: "done"},
	)
	e := newEnv(t, m, func(o *envOptions) { o.Servers = []host.Server{b} })
	s := e.send(t, e.newSession(t), "research gophers")
	var (
		stages []string
		order  []string
	)
	for {
		ev, ok := s.nextWithin(t, time.Minute)
		if !ok {
			break
		}
		switch ev.Name {
		case "step":
			var st StepEvent
			ev.decode(t, &st)
			order = append(order, "step:"+st.State)
		case "status":
			var st StatusEvent
			ev.decode(t, &st)
			if st.ID != "r1" || st.Tool != "simulate-research-query" || st.Server != "everything" || st.Task == "" {
				t.Errorf("status event %+v: want the step r1 of everything's simulate-research-query, with its task", st)
			}
			stages = append(stages, st.Status+": "+st.Message)
			order = append(order, "status")
		}
	}
	all := strings.Join(stages, "\n")
	for _, want := range []string{"working: Gathering sources...", "completed"} {
		if !strings.Contains(all, want) {
			t.Errorf("status events:\n%s\nwant %q", all, want)
		}
	}
	if len(order) < 3 || order[0] != "step:running" || order[len(order)-1] != "step:ok" || order[1] != "status" {
		t.Errorf("events %v: want step running, the statuses, step ok", order)
	}
}
