package support_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/support"
)

// TestIdempotencyAcrossReplicas repeats one createTicket call at once on
// several Services, each with its own connection pool to one database, as
// replicas behind a load balancer are: every call returns the same ticket
// and one row is stored. It runs on either backend; on PostgreSQL it
// needs the advisory lock in createTicket, without which the replicas'
// checks all find no ticket and each opens its own.
func TestIdempotencyAcrossReplicas(t *testing.T) {
	dir := t.TempDir()
	const replicas, perReplica = 3, 6
	svcs := make([]*support.Service, replicas)
	for i := range svcs {
		svcs[i], _ = openService(t, dir)
	}
	_, st := openService(t, dir)
	ctx := agent.WithSession(context.Background(), "session-retried")
	var mu sync.Mutex
	ids := map[string]int{}
	var wg sync.WaitGroup
	for _, svc := range svcs {
		for range perReplica {
			wg.Go(func() {
				out, err := svc.CreateTicketTool().Execute(ctx, mustJSON(t, map[string]string{
					"subject": "退款", "description": "订单 A-1024 重复提交"}))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ids[out.(support.Ticket).TicketID]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	if len(ids) != 1 {
		t.Errorf("the repeated call opened %d tickets: %v", len(ids), ids)
	}
	if n := countRows(t, st, "support_tickets"); n != 1 {
		t.Errorf("%d tickets stored, want 1", n)
	}
}
