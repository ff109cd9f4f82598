package support_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/support"
)

func TestOperatorQueue(t *testing.T) {
	clock := newFakeClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	svc, _ := openService(t, t.TempDir(), support.WithClock(clock.Now))
	ctx := agent.WithSession(context.Background(), "s-1")
	for i := range 3 {
		if _, err := svc.CreateTicketTool().Execute(ctx, mustJSON(t, map[string]string{"subject": fmt.Sprint("问题 ", i), "description": "详情"})); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.EscalateTool().Execute(ctx, mustJSON(t, map[string]string{"reason": fmt.Sprint("原因 ", i), "transcript": "用户: 转人工"})); err != nil {
			t.Fatal(err)
		}
	}
	tickets, err := svc.Tickets(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(tickets) != 2 || tickets[0].Subject != "问题 2" || tickets[1].Subject != "问题 1" || tickets[0].Session != "s-1" || tickets[0].Status != support.TicketStatusOpen {
		t.Fatalf("tickets, newest first, at most 2: %+v", tickets)
	}
	handoffs, err := svc.Handoffs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(handoffs) != 3 || handoffs[0].Reason != "原因 2" || handoffs[0].Transcript != "用户: 转人工" || handoffs[0].ResolvedAt != "" {
		t.Fatalf("hand-offs: %+v", handoffs)
	}

	clock.Advance(time.Hour)
	if err := svc.ResolveTicket(ctx, tickets[0].TicketID); err != nil {
		t.Fatal(err)
	}
	if err := svc.ResolveHandoff(ctx, handoffs[2].TicketID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	// Resolving again keeps the first time.
	if err := svc.ResolveTicket(ctx, tickets[0].TicketID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{svc.ResolveTicket(ctx, "TK-nope"), svc.ResolveHandoff(ctx, tickets[1].TicketID)} {
		if !errors.Is(err, support.ErrNotFound) {
			t.Errorf("resolving an unknown id: %v, want ErrNotFound", err)
		}
	}
	tickets, _ = svc.Tickets(ctx, 0)
	handoffs, _ = svc.Handoffs(ctx, 0)
	if tickets[0].Status != support.TicketStatusResolved || tickets[0].ResolvedAt != "2026-12-01T10:00:00Z" || tickets[1].ResolvedAt != "" {
		t.Errorf("tickets after resolving: %+v", tickets)
	}
	if handoffs[2].ResolvedAt != "2026-12-01T10:00:00Z" || handoffs[0].ResolvedAt != "" {
		t.Errorf("hand-offs after resolving: %+v", handoffs)
	}
}
