package support_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// Example looks up a seeded order with the getOrderStatus tool, the way the
// tool loop does: check the arguments against the tool's schema, run it and
// show the model the JSON.
func Example() {
	dir, err := os.MkdirTemp("", "support-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	svc, err := support.New(ctx, st)
	if err != nil {
		fmt.Println(err)
		return
	}

	tool := svc.OrderStatusTool()
	for _, args := range []string{`{"orderId":"A-1024"}`, `{"orderId":"C-0404"}`, `{"orderId":"1024"}`} {
		if err := tool.CheckArgs(json.RawMessage(args)); err != nil {
			fmt.Println("rejected:", args)
			continue
		}
		out, err := tool.Execute(ctx, json.RawMessage(args))
		if err != nil {
			fmt.Println(err)
			continue
		}
		text, _ := agent.FormatOutput(out)
		fmt.Println(text)
	}
	// Output:
	// {"orderId":"A-1024","status":"已发货","eta":"明天 18:00 前送达"}
	// {"orderId":"C-0404","found":false,"message":"No order with number C-0404 was found. Ask the customer to check the order number."}
	// rejected: {"orderId":"1024"}
}
