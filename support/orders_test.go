package support_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/agent"

	"github.com/agentapp/agentapp/support"
)

func TestOrderStatusSeedOrders(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	tests := []struct {
		args string
		want support.OrderStatus
	}{
		{`{"orderId":"A-1024"}`, support.OrderStatus{OrderID: "A-1024", Status: "已发货", ETA: "明天 18:00 前送达"}},
		{`{"orderId":"A-2048"}`, support.OrderStatus{OrderID: "A-2048", Status: "仓库打包中", ETA: "后天发货"}},
		{`{"orderId":"B-0001"}`, support.OrderStatus{OrderID: "B-0001", Status: "已签收", ETA: "已送达，无需等待"}},
		{`{"orderId":" A-1024\n"}`, support.OrderStatus{OrderID: "A-1024", Status: "已发货", ETA: "明天 18:00 前送达"}},
	}
	for _, tt := range tests {
		got, err := svc.OrderStatusTool().Execute(context.Background(), json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		if got := decodeOrder[support.OrderStatus](t, got); got != tt.want {
			t.Errorf("%s: got %#v, want %#v", tt.args, got, tt.want)
		}
	}
}

// decodeOrder decodes getOrderStatus's output, which is encoded once by the
// tool (json.RawMessage), into its result type, requiring the very bytes
// json.Marshal gives for the decoded value.
func decodeOrder[T any](t *testing.T, out any) T {
	t.Helper()
	o, ok := out.(json.RawMessage)
	if !ok {
		t.Fatalf("getOrderStatus returned %T, want json.RawMessage", out)
	}
	var v T
	if err := json.Unmarshal(o, &v); err != nil {
		t.Fatalf("%s: %v", o, err)
	}
	if b, _ := json.Marshal(v); string(b) != string(o) {
		t.Fatalf("output %s is not what json.Marshal gives for %#v: %s", o, v, b)
	}
	return v
}

func TestOrderStatusUnknownIsANormalResult(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	got, err := svc.OrderStatusTool().Execute(context.Background(), json.RawMessage(`{"orderId":"C-9999"}`))
	if err != nil {
		t.Fatalf("unknown order gave an error: %v", err)
	}
	nf := decodeOrder[support.OrderNotFound](t, got)
	if nf.OrderID != "C-9999" || nf.Found || nf.Message == "" {
		t.Errorf("got %#v", nf)
	}
	out, err := agent.FormatOutput(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if m["found"] != false || m["orderId"] != "C-9999" {
		t.Errorf("JSON output %s lacks found=false or the order id", out)
	}
}

func TestSeedIsAppliedOnce(t *testing.T) {
	dir := t.TempDir()
	_, st := openService(t, dir)
	if _, err := st.DB.Exec(`DELETE FROM support_orders WHERE id = 'B-0001'`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	svc, st := openService(t, dir)
	if n := countRows(t, st, "support_orders"); n != 2 {
		t.Errorf("after reopening there are %d orders, want 2 (a removed seed order must stay removed)", n)
	}
	got, err := svc.OrderStatusTool().Execute(context.Background(), json.RawMessage(`{"orderId":"A-1024"}`))
	if err != nil || decodeOrder[support.OrderStatus](t, got).Status != "已发货" {
		t.Errorf("A-1024 after reopen: %#v, %v", got, err)
	}
}

func TestExecuteHonoursCancelledContext(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := svc.OrderStatusTool().Execute(ctx, json.RawMessage(`{"orderId":"A-1024"}`)); err == nil {
		t.Error("getOrderStatus with a cancelled context succeeded")
	}
	if _, err := svc.CreateTicketTool().Execute(ctx, json.RawMessage(`{"subject":"s","description":"d"}`)); err == nil {
		t.Error("createTicket with a cancelled context succeeded")
	}
}
