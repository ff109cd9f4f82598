package mcpclient

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestHeadlineMCPToolRunsLikeLocalTool proves the design's first rule: the same
// scripted conversation run once with the local getOrderStatus and once
// with getOrderStatus served by our MCP server over an in-memory connection
// produces step events that are equal field by field. The loop cannot tell
// the two apart.
func TestHeadlineMCPToolRunsLikeLocalTool(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := support.New(ctx, st, support.WithClock(func() time.Time {
		return time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	}))
	if err != nil {
		t.Fatal(err)
	}
	local := svc.OrderStatusTool()

	b, err := ConnectInMemory(ctx, "agentapp", mcpserver.New(&mcpserver.Options{Version: "test", Tools: []*agent.Tool{local}}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	remote := adTool(t, b, "getOrderStatus")
	if remote.IsLocal() || remote.Origin != "agentapp" {
		t.Fatalf("adapted tool origin %q", remote.Origin)
	}
	// The annotations set where the tool is defined cross the protocol.
	hints := func(t *agent.Tool) [4]string {
		deref := func(p *bool) string {
			if p == nil {
				return "unset"
			}
			return map[bool]string{true: "true", false: "false"}[*p]
		}
		return [4]string{fmt.Sprint(t.ReadOnly), fmt.Sprint(t.Idempotent), deref(t.Destructive), deref(t.OpenWorld)}
	}
	if got, want := hints(remote), hints(local); got != want || want != [4]string{"true", "true", "false", "false"} {
		t.Errorf("annotations (readOnly, idempotent, destructive, openWorld): adapted %v, local %v; want both true, true, false, false", got, want)
	}

	turns := func() *scripted.Model {
		return scripted.New(
			scripted.Turn{Text: "Let me look these up.", Calls: []model.ToolCall{
				scripted.Call("c1", "getOrderStatus", `{"orderId":"A-1024"}`),
				scripted.Call("c2", "getOrderStatus", `{"orderId":"B-0001"}`),
			}},
			scripted.Turn{Text: "And one more.", Calls: []model.ToolCall{
				scripted.Call("c3", "getOrderStatus", `{"orderId":"Z-9999"}`),
			}},
			scripted.Turn{Text: "A-1024 arrives tomorrow; B-0001 was delivered; Z-9999 does not exist."},
		)
	}
	runWith := func(tool *agent.Tool) ([]agent.StepEvent, *agent.Result) {
		var events []agent.StepEvent
		res, err := agent.Run(ctx, agent.Options{
			Model:    turns(),
			Messages: []model.Message{{Role: model.RoleUser, Content: "Where are A-1024, B-0001 and Z-9999?"}},
			Tools:    agent.MustToolSet(tool),
			OnStep:   func(ev agent.StepEvent) { events = append(events, ev) },
		})
		if err != nil {
			t.Fatalf("run with the %q tool: %v", tool.Origin, err)
		}
		return events, res
	}
	localEvents, localRes := runWith(local)
	mcpEvents, mcpRes := runWith(remote)

	if len(localEvents) != 3 {
		t.Fatalf("local run produced %d step events, want 3", len(localEvents))
	}
	for _, ev := range localEvents {
		if ev.Err != nil || !strings.Contains(ev.Output, "orderId") {
			t.Fatalf("local step event is not a successful order lookup: %+v", ev)
		}
	}
	if diff := cmp.Diff(localEvents, mcpEvents, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("step events differ between the local and the MCP tool (-local +mcp):\n%s", diff)
	}
	if diff := cmp.Diff(localRes, mcpRes); diff != "" {
		t.Errorf("run results differ (-local +mcp):\n%s", diff)
	}
}
