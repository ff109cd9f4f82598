package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFloorTool checks the floor's one tool: structured output that the
// SDK validates against its outputSchema, and a tool error for an unknown
// order.
func TestFloorTool(t *testing.T) {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := newServer().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].OutputSchema == nil {
		t.Fatalf("tools/list: %v, %v; want getOrderStatus with an outputSchema", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %+v, %v", res, err)
	}
	got, _ := json.Marshal(res.StructuredContent)
	if string(got) != `{"eta":"2026-12-03","orderId":"A-1024","status":"已发货"}` {
		t.Errorf("structuredContent %s", got)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "Z-1"}})
	if err != nil || !res.IsError {
		t.Errorf("an unknown order: %+v, %v; want a tool error", res, err)
	}
}
