package trace_test

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/trace"
)

func ExampleNew() {
	orders := &agent.Tool{
		Name: "getOrderStatus",
		Execute: func(context.Context, json.RawMessage) (any, error) {
			return map[string]string{"orderId": "A-1024", "status": "已发货", "eta": "明天 18:00 前送达"}, nil
		},
	}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", `{"orderId":"A-1024"}`)}},
		scripted.Turn{Text: "订单 A-1024 的状态：已发货，预计 明天 18:00 前送达。"},
	)
	// A fixed clock keeps the elapsed times stable; a real trace uses the
	// wall clock and writes to os.Stderr.
	fixed := func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	tr := trace.New(os.Stdout, trace.WithPreview(40), trace.WithClock(fixed))
	_, _ = agent.Run(context.Background(), agent.Options{
		Model:    m,
		Messages: []model.Message{{Role: model.RoleUser, Content: "订单 A-1024 到哪了？"}},
		Tools:    agent.MustToolSet(orders),
		Observer: tr,
	})
	// Output:
	// [trace] step 1 +0ms think: messages=1 tools=1
	// [trace] step 1 +0ms act: getOrderStatus {"orderId":"A-1024"}
	// [trace] step 1 +0ms observe ok: getOrderStatus -> {"eta":"明天 18:00 前送达","orderId":"A-1024"…(+16 chars, 56 total)
	// [trace] step 2 +0ms think: messages=3 tools=1
	// [trace] step 2 +0ms done: steps=1 answer: 订单 A-1024 的状态：已发货，预计 明天 18:00 前送达。
}
