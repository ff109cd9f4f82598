package host

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
)

// TestSessionStorePrunesEmptySessions: sessions handed out and never used
// are removed once emptySessionTTL has passed, as further sessions are
// created; a session with a message is kept however old, and so is an
// empty one still within the TTL.
func TestSessionStorePrunesEmptySessions(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	ss, err := OpenSessionStore(ctx, st, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"old-empty-1", "old-empty-2", "old-used"} {
		if err := ss.Create(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.Append(ctx, "old-used", []model.Message{{Role: model.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(emptySessionTTL - time.Hour)
	if err := ss.Create(ctx, "recent-empty"); err != nil {
		t.Fatal(err)
	}
	if got, want := sessionIDs(t, ss), []string{"old-empty-1", "old-empty-2", "old-used", "recent-empty"}; !cmp.Equal(got, want) {
		t.Fatalf("within the TTL: sessions %v, want %v", got, want)
	}
	now = now.Add(2 * time.Hour) // the first three are past the TTL, the fourth is not
	if err := ss.Create(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if got, want := sessionIDs(t, ss), []string{"new", "old-used", "recent-empty"}; !cmp.Equal(got, want) {
		t.Errorf("past the TTL: sessions %v, want %v", got, want)
	}
	now = now.Add(emptySessionTTL + time.Minute)
	if err := ss.Create(ctx, "newer"); err != nil {
		t.Fatal(err)
	}
	if got, want := sessionIDs(t, ss), []string{"newer", "old-used"}; !cmp.Equal(got, want) {
		t.Errorf("a day later: sessions %v, want %v", got, want)
	}
}

func sessionIDs(t *testing.T, ss *SessionStore) []string {
	t.Helper()
	rows, err := ss.s.st.DB.Query(`SELECT id FROM chat_sessions`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	return ids
}

// TestAppendManyMessages: a turn of more messages than one INSERT holds is
// stored whole and in order after the earlier turns, tool calls included,
// and the next turn's view reads it back as stored.
func TestAppendManyMessages(t *testing.T) {
	ctx := context.Background()
	ss, err := OpenSessionStore(ctx, openTestStore(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	first := []model.Message{{Role: model.RoleUser, Content: "hi"}, {Role: model.RoleAssistant, Content: "hello"}}
	if err := ss.Append(ctx, "m", first); err != nil {
		t.Fatal(err)
	}
	turn := []model.Message{{Role: model.RoleUser, Content: "check them all"}}
	for i := range 2*insertBatch + 5 {
		id := fmt.Sprint("c", i)
		turn = append(turn, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "get", Arguments: json.RawMessage(`{"i":1}`)}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Name: "get", Content: fmt.Sprint("result ", i)})
	}
	turn = append(turn, model.Message{Role: model.RoleAssistant, Content: "all done"})
	if err := ss.Append(ctx, "m", turn); err != nil {
		t.Fatal(err)
	}
	want := append(append([]model.Message(nil), first...), turn...)
	got, err := ss.Window(ctx, "m", 10000)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("stored session differs (-want +got):\n%s", d)
	}
	v, err := ss.s.view(ctx, "m", budget.NewEstimator(budget.FamilyO200k))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, v.msgs); d != "" {
		t.Errorf("view differs (-want +got):\n%s", d)
	}
	// The prepared statements are one per query text: the batch sizes
	// used (64 and 5 here, 2 before) and the few fixed queries.
	if n := len(ss.s.stmts.m); n > 10 {
		t.Errorf("%d statements prepared; want one per distinct query", n)
	}
}

// TestHostCloseClosesStatements: the statements the host prepared on a
// store it does not own are closed with it, and the store stays usable.
func TestHostCloseClosesStatements(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	h := viewHost(t, st, &recordModel{}, true)
	viewTurn(t, h, "s", 1)
	viewTurn(t, h, "s", 2)
	if len(h.sessions.s.stmts.m) == 0 {
		t.Fatal("no statement was prepared")
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(h.sessions.s.stmts.m); n != 0 {
		t.Errorf("%d statements left open", n)
	}
	if n, _, err := h.Sessions().Count(ctx, "s"); err != nil || n != 4 {
		t.Errorf("Count = %d, %v after Close; want the 4 stored messages", n, err)
	}
}
