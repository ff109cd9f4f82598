package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// BenchmarkRunStep measures the loop's own overhead for one tool round: a
// scripted model (which costs next to nothing) asks for one trivial tool,
// then answers. One op is one run of one step.
func BenchmarkRunStep(b *testing.B) {
	noop := &agent.Tool{Name: "noop", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return "ok", nil }}
	set := agent.MustToolSet(noop)
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "noop", `{}`)}},
		scripted.Turn{Text: "done"},
	)
	m.Loop = true
	m.Record = false
	msgs := []model.Message{{Role: model.RoleUser, Content: "go"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agent.Run(ctx, agent.Options{Model: m, Messages: msgs, Tools: set}); err != nil {
			b.Fatal(err)
		}
	}
}
