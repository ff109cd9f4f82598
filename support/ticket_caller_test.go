package support_test

import (
	"context"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/support"
)

// TestTicketIdempotencyPerCaller (issue 43, item 10): two callers (two
// bearer tokens) whose conversations have the same name and who send the
// same text get a ticket each; the same caller's retry gets its first.
func TestTicketIdempotencyPerCaller(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	args := mustJSON(t, map[string]string{"subject": "broken kettle", "description": "order A-1024 arrived broken"})
	open := func(caller string) string {
		t.Helper()
		ctx := agent.WithSession(context.Background(), "client:conv-1")
		if caller != "" {
			ctx = support.WithCaller(ctx, caller)
		}
		out, err := svc.CreateTicketTool().Execute(ctx, args)
		if err != nil {
			t.Fatal(err)
		}
		return out.(support.Ticket).TicketID
	}
	a, b := open("token:aaaa"), open("token:bbbb")
	if a == b {
		t.Errorf("two callers with the same conversation name share ticket %s", a)
	}
	if again := open("token:aaaa"); again != a {
		t.Errorf("a retry of the same caller opened %s; want %s", again, a)
	}
	if local, again := open(""), open(""); local != again || local == a || local == b {
		t.Errorf("without a caller: %s then %s (callers had %s, %s)", local, again, a, b)
	}
}
