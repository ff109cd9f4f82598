package host

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentapp/agentapp/model"
)

// TestSessionStorePrunesEmptySessions: sessions handed out and never used
// are removed once EmptySessionTTL has passed, as further sessions are
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
	now = now.Add(EmptySessionTTL - time.Hour)
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
	now = now.Add(EmptySessionTTL + time.Minute)
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
