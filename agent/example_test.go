package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// ExampleRun runs one tool round with a scripted model: the model asks for
// the order's status, the loop runs the tool and feeds the result back, and
// the model answers.
func ExampleRun() {
	orderStatus := &agent.Tool{
		Name:        "getOrderStatus",
		Description: "Looks up an order by id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}`),
		Validate:    true,
		Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
			var in struct{ OrderID string }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return map[string]string{"orderId": in.OrderID, "status": "shipped"}, nil
		},
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("call-1", "getOrderStatus", map[string]string{"orderId": "A-1024"})}},
		scripted.Turn{Text: "Order A-1024 has shipped."},
	)
	res, err := agent.Run(context.Background(), agent.Options{
		Model:    m,
		Messages: []model.Message{{Role: model.RoleUser, Content: "Where is order A-1024?"}},
		Tools:    agent.MustToolSet(orderStatus),
		OnStep: func(ev agent.StepEvent) {
			fmt.Printf("step %d: %s %s -> %s\n", ev.Step, ev.ToolName, ev.Input, ev.Output)
		},
	})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(res.Text)
	// Output:
	// step 1: getOrderStatus {"orderId":"A-1024"} -> {"orderId":"A-1024","status":"shipped"}
	// Order A-1024 has shipped.
}
