package support_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/support"
)

var ticketIDRe = regexp.MustCompile(`^TK-\d{8}-\d{4,}$`)

// createTicket calls the createTicket tool and returns its result.
func createTicket(t testing.TB, svc *support.Service, ctx context.Context, subject, description string) support.Ticket {
	t.Helper()
	out, err := svc.CreateTicketTool().Execute(ctx, mustJSON(t, map[string]string{"subject": subject, "description": description}))
	if err != nil {
		t.Fatalf("createTicket(%q): %v", subject, err)
	}
	tk, ok := out.(support.Ticket)
	if !ok {
		t.Fatalf("createTicket returned %T, want support.Ticket", out)
	}
	return tk
}

func TestTicketIDsAndPersistenceAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock(time.Date(2025, 3, 9, 23, 59, 0, 0, time.FixedZone("CST", 8*3600)))
	svc, st := openService(t, dir, support.WithClock(clock.Now))
	ctx := context.Background()

	first := createTicket(t, svc, ctx, "  退款申请 ", "订单 A-1024 破损\n")
	want := support.Ticket{TicketID: "TK-20250309-0001", Subject: "退款申请", Description: "订单 A-1024 破损", Status: "open"}
	if first != want {
		t.Fatalf("first ticket = %#v, want %#v (UTC date, trimmed text)", first, want)
	}
	second := createTicket(t, svc, ctx, "投诉", "快递员态度差")
	if second.TicketID != "TK-20250309-0002" {
		t.Fatalf("second ticket id = %s", second.TicketID)
	}
	st.Close()

	// A restart on another day continues the sequence rather than reusing numbers.
	clock.Advance(24 * time.Hour)
	svc, st = openService(t, dir, support.WithClock(clock.Now))
	third := createTicket(t, svc, ctx, "换货", "尺码不合适")
	if third.TicketID != "TK-20250310-0003" {
		t.Fatalf("ticket after reopen = %s, want TK-20250310-0003", third.TicketID)
	}
	rows, err := st.DB.Query(`SELECT id, subject, description, status FROM support_tickets ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []support.Ticket
	for rows.Next() {
		var tk support.Ticket
		if err := rows.Scan(&tk.TicketID, &tk.Subject, &tk.Description, &tk.Status); err != nil {
			t.Fatal(err)
		}
		got = append(got, tk)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	wantRows := []support.Ticket{first, second, third}
	if fmt.Sprint(got) != fmt.Sprint(wantRows) {
		t.Errorf("stored tickets = %v, want %v", got, wantRows)
	}
}

func TestTicketIDWidensPastNineThousandNineHundredNinetyNine(t *testing.T) {
	svc, st := openService(t, t.TempDir(), support.WithClock(func() time.Time { return time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC) }))
	if _, err := st.DB.Exec(`UPDATE support_counters SET value = 9999 WHERE name = 'ticket'`); err != nil {
		t.Fatal(err)
	}
	tk := createTicket(t, svc, context.Background(), "s", "d")
	if tk.TicketID != "TK-20250102-10000" || !ticketIDRe.MatchString(tk.TicketID) {
		t.Errorf("ticket id = %s, want TK-20250102-10000", tk.TicketID)
	}
}

func TestTicketIdempotencyWindow(t *testing.T) {
	clock := newFakeClock(time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC))
	svc, st := openService(t, t.TempDir(), support.WithClock(clock.Now))
	alice := agent.WithSession(context.Background(), "alice")
	bob := agent.WithSession(context.Background(), "bob")

	first := createTicket(t, svc, alice, "退款", "订单 A-1024 申请退款")

	clock.Advance(9*time.Minute + 59*time.Second)
	if again := createTicket(t, svc, alice, "退款", "订单 A-1024 申请退款"); again != first {
		t.Errorf("same call within the window = %v, want the first ticket %v", again, first)
	}
	if spaced := createTicket(t, svc, alice, " 退款 ", "订单 A-1024 申请退款\n"); spaced != first {
		t.Errorf("same call with extra white space = %v, want the first ticket %v (canonical arguments)", spaced, first)
	}
	if other := createTicket(t, svc, alice, "退款", "订单 A-2048 申请退款"); other.TicketID == first.TicketID {
		t.Errorf("different description returned the same ticket %s", other.TicketID)
	}
	if bobs := createTicket(t, svc, bob, "退款", "订单 A-1024 申请退款"); bobs.TicketID == first.TicketID {
		t.Errorf("another session returned alice's ticket %s", bobs.TicketID)
	}
	noSession := createTicket(t, svc, context.Background(), "退款", "订单 A-1024 申请退款")
	if noSession.TicketID == first.TicketID {
		t.Errorf("a call without a session returned alice's ticket %s", noSession.TicketID)
	}
	if again := createTicket(t, svc, context.Background(), "退款", "订单 A-1024 申请退款"); again != noSession {
		t.Errorf("the empty session is not a session of its own: %v, want %v", again, noSession)
	}

	// The window counts from the first call, not from the last repeat.
	clock.Advance(2 * time.Second)
	later := createTicket(t, svc, alice, "退款", "订单 A-1024 申请退款")
	if later.TicketID == first.TicketID {
		t.Fatalf("same call after 10 minutes returned the old ticket %s", later.TicketID)
	}
	if again := createTicket(t, svc, alice, "退款", "订单 A-1024 申请退款"); again != later {
		t.Errorf("repeat right after the new ticket = %v, want %v", again, later)
	}
	if n := countRows(t, st, "support_tickets"); n != 5 {
		t.Errorf("%d tickets stored, want 5", n)
	}
}

func TestConcurrentTicketCreation(t *testing.T) {
	svc, st := openService(t, t.TempDir())
	const workers, perWorker = 8, 10
	ids := make(chan string, workers*perWorker)
	errs := make(chan error, workers*perWorker)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := agent.WithSession(context.Background(), fmt.Sprint("worker-", w))
			for i := range perWorker {
				out, err := svc.CreateTicketTool().Execute(ctx, mustJSON(t, map[string]string{
					"subject": fmt.Sprintf("工单 %d-%d", w, i), "description": "并发创建",
				}))
				if err != nil {
					errs <- err
					continue
				}
				ids <- out.(support.Ticket).TicketID
			}
		})
	}
	wg.Wait()
	close(ids)
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("ticket id %s handed out twice", id)
		}
		if !ticketIDRe.MatchString(id) {
			t.Errorf("ticket id %s has the wrong format", id)
		}
		seen[id] = true
	}
	if len(seen) != workers*perWorker {
		t.Errorf("%d distinct ids, want %d", len(seen), workers*perWorker)
	}
	if n := countRows(t, st, "support_tickets"); n != workers*perWorker {
		t.Errorf("%d tickets stored, want %d", n, workers*perWorker)
	}
	var maxSeq int
	if err := st.DB.QueryRow(`SELECT MAX(seq) FROM support_tickets`).Scan(&maxSeq); err != nil {
		t.Fatal(err)
	}
	if maxSeq != workers*perWorker {
		t.Errorf("highest sequence number %d, want %d (no number skipped or reused)", maxSeq, workers*perWorker)
	}
}

func TestEscalateCreatesHandoff(t *testing.T) {
	clock := newFakeClock(time.Date(2025, 6, 1, 10, 30, 15, 0, time.FixedZone("CST", 8*3600)))
	svc, st := openService(t, t.TempDir(), support.WithClock(clock.Now))
	ctx := agent.WithSession(context.Background(), "s1")
	tk := createTicket(t, svc, ctx, "退款", "d")
	out, err := svc.EscalateTool().Execute(ctx, json.RawMessage(`{"reason":" 客户要求人工客服 ","transcript":"用户: 转人工\n助手: 正在为您转接"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := support.Handoff{
		TicketID:   "TK-20250601-0002",
		Reason:     "客户要求人工客服",
		Transcript: "用户: 转人工\n助手: 正在为您转接",
		CreatedAt:  "2025-06-01T02:30:15Z",
	}
	if out != want {
		t.Fatalf("hand-off = %#v, want %#v", out, want)
	}
	if tk.TicketID == want.TicketID {
		t.Fatal("hand-off reused a ticket id")
	}
	var reason, transcript, session, created string
	if err := st.DB.QueryRow(`SELECT reason, transcript, session, created_at FROM support_handoffs WHERE ticket_id = ?`, want.TicketID).
		Scan(&reason, &transcript, &session, &created); err != nil {
		t.Fatalf("hand-off not stored: %v", err)
	}
	if reason != want.Reason || transcript != want.Transcript || session != "s1" || created != want.CreatedAt {
		t.Errorf("stored hand-off = %q %q %q %q", reason, transcript, session, created)
	}
	if _, err := time.Parse(time.RFC3339, want.CreatedAt); err != nil {
		t.Error(err)
	}
}
