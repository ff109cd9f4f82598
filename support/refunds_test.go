package support_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/support"
)

// A refund request waits for an operator; its caller reads the decision
// back, nobody else can, and a decision is made once.
func TestRefundRequestDecision(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	alice := support.WithCaller(context.Background(), "alice")
	out, err := svc.RequestRefundTool().Execute(alice, mustJSON(t, map[string]string{"orderId": "A-1024", "reason": "arrived broken"}))
	if err != nil {
		t.Fatal(err)
	}
	r := out.(*support.Refund)
	if r.Status != support.RefundPending || r.Message != support.RefundWaiting || r.RefundID == "" {
		t.Fatalf("new request: %+v", r)
	}
	if _, err := svc.RequestRefundTool().Execute(alice, mustJSON(t, map[string]string{"orderId": "Z-9", "reason": "x"})); err == nil {
		t.Error("a refund of an order that does not exist was filed")
	}
	read := func(ctx context.Context) (*support.Refund, error) {
		out, err := svc.GetRefundStatusTool().Execute(ctx, mustJSON(t, map[string]string{"refundId": r.RefundID}))
		if err != nil {
			return nil, err
		}
		return out.(*support.Refund), nil
	}
	if got, err := read(alice); err != nil || got.Status != support.RefundPending {
		t.Fatalf("read back before the decision: %+v, %v", got, err)
	}
	bob := support.WithCaller(context.Background(), "bob")
	if _, err := read(bob); !errors.Is(err, support.ErrNotFound) {
		t.Errorf("another caller read the request: err = %v", err)
	}
	list, err := svc.Refunds(context.Background(), 10)
	if err != nil || len(list) != 1 || list[0].Caller != "alice" {
		t.Fatalf("operator list: %+v, %v", list, err)
	}
	if _, err := svc.DecideRefund(context.Background(), r.RefundID, true, "sorry about that"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DecideRefund(context.Background(), r.RefundID, false, ""); !errors.Is(err, support.ErrDecided) {
		t.Errorf("a second decision: err = %v; want ErrDecided", err)
	}
	if _, err := svc.DecideRefund(context.Background(), "RF-nope", true, ""); !errors.Is(err, support.ErrNotFound) {
		t.Errorf("deciding an unknown request: err = %v; want ErrNotFound", err)
	}
	got, err := read(alice)
	if err != nil || got.Status != support.RefundApproved || got.Message != "approved by an operator: sorry about that" {
		t.Fatalf("read back after approval: %+v, %v", got, err)
	}
}

// The published schema lets a caller leave the reason out (an MCP client
// is asked for it, mcpserver.Question); the tool itself still needs it
// and says so.
func TestRefundReasonOptionalInSchemaRequiredByTool(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	tool := svc.RequestRefundTool()
	args := mustJSON(t, map[string]string{"orderId": "A-1024"})
	if err := tool.CheckArgs(args); err != nil {
		t.Fatalf("the schema refuses a call without reason: %v", err)
	}
	_, err := tool.Execute(support.WithCaller(context.Background(), "alice"), args)
	if err == nil || !strings.Contains(err.Error(), "reason is required") {
		t.Fatalf("requestRefund without reason: %v, want \"reason is required\"", err)
	}
}
