package web

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/agentapp/agentapp/host"
)

// TestBudgetLeftInChatAPI: with session caps set by whoever runs the
// service, the done event and GET /api/sessions/{id} carry what the
// session may still use (tokens, and cost where priced); without caps
// neither carries a budget.
func TestBudgetLeftInChatAPI(t *testing.T) {
	e := newEnv(t, toolTurns(), func(o *envOptions) {
		o.Spend = host.Spend{SessionTokens: 1_000_000, Cost: 5, Price: &host.Price{Input: 3, Output: 15}}
	})
	id := e.newSession(t)
	evs := e.send(t, id, "订单 A-1024 到哪了？").until(t, "done")
	var done DoneEvent
	evs[len(evs)-1].decode(t, &done)
	used := float64(done.Usage.InputTokens + done.Usage.OutputTokens)
	b := done.Budget
	if b == nil || b.Tokens == nil || b.Cost == nil {
		t.Fatalf("done event budget %+v; want tokens and cost", b)
	}
	if b.Tokens.Cap != 1_000_000 || b.Tokens.Left != 1_000_000-used || used <= 0 {
		t.Errorf("tokens %+v after a turn of %v tokens", *b.Tokens, used)
	}
	cost := (float64(done.Usage.InputTokens)*3 + float64(done.Usage.OutputTokens)*15) / 1e6
	if b.Cost.Cap != 5 || b.Cost.Left != 5-cost {
		t.Errorf("cost %+v, want 5 - %v", *b.Cost, cost)
	}

	resp, err := e.ts.Client().Get(e.url("/api/sessions/" + id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info SessionInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET session: %d %v", resp.StatusCode, err)
	}
	if info.Budget == nil || info.Budget.Tokens == nil || *info.Budget.Tokens != *b.Tokens || info.Budget.Cost == nil || *info.Budget.Cost != *b.Cost {
		t.Errorf("GET session budget %+v, want %+v as the done event's", info.Budget, b)
	}

	// No caps: nothing.
	e2 := newEnv(t, toolTurns(), nil)
	id2 := e2.newSession(t)
	evs = e2.send(t, id2, "订单 A-1024 到哪了？").until(t, "done")
	var done2 DoneEvent
	evs[len(evs)-1].decode(t, &done2)
	if done2.Budget != nil {
		t.Errorf("done event budget %+v without caps", done2.Budget)
	}
}
