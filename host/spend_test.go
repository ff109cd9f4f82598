package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// usageModel reports the usage given on each reply, as a provider does.
type usageModel struct {
	*scripted.Model
	in, out int
}

func (m *usageModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r, err := m.Model.Generate(ctx, req)
	if r != nil {
		r.Usage.InputTokens, r.Usage.OutputTokens = m.in, m.out
	}
	return r, err
}

func (m *usageModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	return m.Generate(ctx, req)
}

func spendHost(t *testing.T, m model.Model, s Spend) *Host {
	t.Helper()
	h, err := newHost(context.Background(), config{Model: m, Store: openTestStore(t), Spend: s})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestSpendStopsBeforeTheCall: a session cap below the first request's
// estimate and output cap stops the turn before the model is called, naming
// the cap.
func TestSpendStopsBeforeTheCall(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "never"})
	h := spendHost(t, m, Spend{SessionTokens: 100, Names: SpendNames{SessionTokens: "--max-session-tokens"}})
	_, err := h.Run(context.Background(), Turn{Session: "s1", Text: "where is A-1024?"})
	var be *BudgetError
	if !errors.As(err, &be) || !be.Before || be.Cap != "--max-session-tokens" || be.Limit != "100" ||
		!strings.Contains(err.Error(), "--max-session-tokens 100") {
		t.Fatalf("err %v", err)
	}
	if len(m.Requests()) != 0 {
		t.Error("the model was called")
	}
}

// TestSpendStopsAfterReportedUsage: the cost of the usage the provider
// reported passes the cap: the turn stops after that call, and the
// session's budget left is 0.
func TestSpendStopsAfterReportedUsage(t *testing.T) {
	sm := scripted.New(scripted.Turn{Text: "ok"}, scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "nothing", "{}")}}, scripted.Turn{Text: "never"})
	m := &usageModel{Model: sm, in: 100_000, out: 10}
	h := spendHost(t, m, Spend{Cost: 0.5, Price: &Price{Input: 1, Output: 0}})
	if _, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	left, err := h.BudgetLeft(context.Background(), "s1")
	if err != nil || left.Cost < 0.399 || left.Cost > 0.401 || left.SessionTokens != -1 {
		t.Errorf("left %+v %v", left, err)
	}
	m.in = 1_000_000
	_, err = h.Run(context.Background(), Turn{Session: "s1", Text: "hi"})
	var be *BudgetError
	if !errors.As(err, &be) || be.Before || be.Estimated || !strings.Contains(be.Used, "1.1000") {
		t.Fatalf("err %v", err)
	}
	if len(sm.Requests()) != 2 {
		t.Errorf("%d model calls", len(sm.Requests()))
	}
	if left, err = h.BudgetLeft(context.Background(), "s1"); err != nil || left.Cost != 0 {
		t.Errorf("left %+v %v", left, err)
	}
}

// TestSpendTurnCapCountsTheTurnOnly: a turn cap is per turn, a session
// cap counts the earlier turns' stored usage.
func TestSpendTurnCapCountsTheTurnOnly(t *testing.T) {
	sm := scripted.New(scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"}, scripted.Turn{Text: "three"})
	m := &usageModel{Model: sm, in: 5000, out: 10}
	h := spendHost(t, m, Spend{TurnTokens: 5500 + 4096, SessionTokens: 9000})
	for i, want := range []bool{true, false} {
		_, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"})
		if (err == nil) != want {
			t.Fatalf("turn %d: err %v", i+1, err)
		}
		if err != nil && !strings.Contains(err.Error(), "tokens in this session") {
			t.Errorf("turn %d: %v", i+1, err)
		}
	}
}

// TestSpendTurnCap: a turn cap counts the turn's own tokens.
func TestSpendTurnCap(t *testing.T) {
	h := spendHost(t, scripted.New(scripted.Turn{Text: "never"}), Spend{TurnTokens: 100})
	_, err := h.Run(context.Background(), Turn{Session: "s1", Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), "of tokens per turn 100") || !strings.Contains(err.Error(), "tokens this turn") {
		t.Fatalf("err %v", err)
	}
}

// TestSpendDayCap: a day cap counts every session of the host and starts
// again the next UTC day.
func TestSpendDayCap(t *testing.T) {
	sm := scripted.New(scripted.Turn{Text: "a"}, scripted.Turn{Text: "b"}, scripted.Turn{Text: "c"}, scripted.Turn{Text: "d"})
	m := &usageModel{Model: sm, in: 5000, out: 10}
	now := time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)
	h, err := newHost(context.Background(), config{Model: m, Store: openTestStore(t), Now: func() time.Time { return now },
		Spend: Spend{DayTokens: 12000, Names: SpendNames{DayTokens: "--max-day-tokens"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i, want := range []bool{true, true, false} {
		_, err := h.Run(context.Background(), Turn{Session: fmt.Sprintf("s%d", i), Text: "hi"})
		if (err == nil) != want {
			t.Fatalf("session %d: err %v", i, err)
		}
		if err != nil && !strings.Contains(err.Error(), "--max-day-tokens 12000: ") || err != nil && !strings.Contains(err.Error(), "today") {
			t.Errorf("session %d: %v", i, err)
		}
	}
	now = now.Add(2 * time.Hour) // the next UTC day
	if _, err := h.Run(context.Background(), Turn{Session: "s9", Text: "hi"}); err != nil {
		t.Errorf("the next day: %v", err)
	}
}
