package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/store/storetest"
)

// TestAuditTrail: records come back newest first with their time and
// text, on whichever backend the environment selects; an oversized record
// is refused, not stored.
func TestAuditTrail(t *testing.T) {
	st := storetest.Open(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, ev := range []string{"confirm", "allowlist_denied", "input_rejected"} {
		if err := st.AppendAudit(ctx, t0.Add(time.Duration(i)*time.Second), ev, []byte(`{"event":"`+ev+`","args":"订单 A-1024"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.AppendAudit(ctx, t0, "confirm", []byte(strings.Repeat("x", 64<<10+1))); err == nil {
		t.Error("an oversized record was stored")
	}
	got, err := st.RecentAudit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Event != "input_rejected" || got[1].Event != "allowlist_denied" {
		t.Fatalf("recent = %+v", got)
	}
	if !got[0].At.Equal(t0.Add(2*time.Second)) || got[0].Record != `{"event":"input_rejected","args":"订单 A-1024"}` {
		t.Errorf("record = %+v", got[0])
	}
}
