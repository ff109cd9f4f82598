package support_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentapp/agentapp/support"
)

func BenchmarkOrderStatusExecute(b *testing.B) {
	svc, _ := openService(b, b.TempDir())
	tool := svc.OrderStatusTool()
	args := json.RawMessage(`{"orderId":"A-1024"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Execute(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOrderStatusExecuteParallel(b *testing.B) {
	svc, _ := openService(b, b.TempDir())
	tool := svc.OrderStatusTool()
	args := json.RawMessage(`{"orderId":"A-2048"}`)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := tool.Execute(ctx, args); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkCreateTicketExecute(b *testing.B) {
	svc, _ := openService(b, b.TempDir())
	tool := svc.CreateTicketTool()
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		args := json.RawMessage(fmt.Sprintf(`{"subject":"工单 %d","description":"基准测试"}`, i))
		out, err := tool.Execute(ctx, args)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := out.(support.Ticket); !ok {
			b.Fatalf("got %T", out)
		}
	}
}

// BenchmarkOrderStatusCheckArgs measures the argument validation the MCP
// server and the loop run before getOrderStatus's Execute.
func BenchmarkOrderStatusCheckArgs(b *testing.B) {
	svc, _ := openService(b, b.TempDir())
	tool := svc.OrderStatusTool()
	args := json.RawMessage(`{"orderId":"A-1024"}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := tool.CheckArgs(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOrderStatusExecuteCancellable is BenchmarkOrderStatusExecute
// with a cancellable context, as every MCP request has: the SQLite driver
// and database/sql then watch the context during the query.
func BenchmarkOrderStatusExecuteCancellable(b *testing.B) {
	svc, _ := openService(b, b.TempDir())
	tool := svc.OrderStatusTool()
	args := json.RawMessage(`{"orderId":"A-1024"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Execute(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}
