package budget

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/model"
	"github.com/google/go-cmp/cmp"
)

// TestMemoSameFigures: an estimator with a memo gives every text, tool and
// request the figure of one without, on the first call and on later ones.
func TestMemoSameFigures(t *testing.T) {
	plain := NewEstimator(FamilyCL100k)
	memo := plain.WithMemo(NewMemo(nil))
	for round := range 2 {
		for i, s := range loadCorpus(t) {
			if got, want := memo.Text(s.Text), plain.Text(s.Text); got != want {
				t.Fatalf("round %d, sample %d: memo %d, plain %d", round, i, got, want)
			}
		}
		for _, tool := range testTools(40) {
			if got, want := memo.Tool(tool), plain.Tool(tool); got != want {
				t.Fatalf("round %d, tool %s: memo %d, plain %d", round, tool.Name, got, want)
			}
		}
	}
	if n, _ := memo.memo.Len(); n == 0 {
		t.Errorf("the memo holds nothing")
	}
}

func testTools(n int) []model.ToolSpec {
	var out []model.ToolSpec
	for i := range n {
		out = append(out, model.ToolSpec{Name: fmt.Sprintf("tool%d", i),
			Description: fmt.Sprintf("Looks up record %d of the system and returns its status and owner.", i),
			Parameters:  json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"id%d":{"type":"string","maxLength":64}}}`, i))})
	}
	return out
}

// TestMemoChangedInPlace: a tool whose schema or description changed, even
// in the same bytes in place, or a text that changed, is counted afresh:
// the memo is keyed by content, so it cannot give a stale figure.
func TestMemoChangedInPlace(t *testing.T) {
	plain := NewEstimator(FamilyO200k)
	memo := plain.WithMemo(NewMemo(nil))
	params := []byte(`{"type":"object","properties":{"id":{"type":"string","description":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}}`)
	tool := model.ToolSpec{Name: "get", Description: "Gets a record.", Parameters: params}
	before := memo.Tool(tool)
	copy(params[bytesIndex(params, "aaaa"):], "订单")
	if got, want := memo.Tool(tool), plain.Tool(tool); got != want || got == before {
		t.Errorf("schema changed in place: memo %d, plain %d (before %d)", got, want, before)
	}
	tool.Description = "Gets a record by its id, with every field of it and its history."
	if got, want := memo.Tool(tool), plain.Tool(tool); got != want {
		t.Errorf("description changed: memo %d, plain %d", got, want)
	}
	b := []byte(strings.Repeat("word ", 20))
	s1 := string(b)
	memo.Text(s1)
	copy(b, "订单订单")
	if got, want := memo.Text(string(b)), plain.Text(string(b)); got != want {
		t.Errorf("text changed: memo %d, plain %d", got, want)
	}
}

func bytesIndex(b []byte, s string) int { return strings.Index(string(b), s) }

// TestMemoBounded: the memo never holds more entries or bytes than its
// bounds, and a text larger than the byte bound is not kept.
func TestMemoBounded(t *testing.T) {
	m := NewMemo(&MemoOptions{MaxEntries: 8, MaxBytes: 2000})
	e := NewEstimator(FamilyO200k).WithMemo(m)
	plain := NewEstimator(FamilyO200k)
	for i := range 200 {
		s := fmt.Sprintf("%d: %s", i, strings.Repeat("the order has shipped ", 1+i%9))
		if got, want := e.Text(s), plain.Text(s); got != want {
			t.Fatalf("text %d: %d, want %d", i, got, want)
		}
		if n, b := m.Len(); n > 8 || b > 2000 {
			t.Fatalf("after %d texts the memo holds %d entries, %d bytes", i+1, n, b)
		}
	}
	m = NewMemo(&MemoOptions{MaxBytes: 100})
	e = NewEstimator(FamilyO200k).WithMemo(m)
	e.Text(strings.Repeat("x", 500))
	if n, _ := m.Len(); n != 0 {
		t.Errorf("a text over the byte bound was kept")
	}
}

// TestCountedMatchesCounting: planning, selecting and estimating with the
// caller's kept message estimates gives what counting them gives; kept
// estimates of the wrong length are ignored.
func TestCountedMatchesCounting(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	var hist []model.Message
	for i := range 30 {
		hist = append(hist, model.Message{Role: model.RoleUser, Content: fmt.Sprintf("第 %d 个问题：订单 A-%d 什么时候到？", i, 1000+i)})
		if i%3 == 0 {
			id := fmt.Sprintf("c%d", i)
			hist = append(hist, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "get", Arguments: json.RawMessage(`{"id":"A-1"}`)}}},
				model.Message{Role: model.RoleTool, ToolCallID: id, Name: "get", Content: strings.Repeat(`{"status":"shipped"}`, 5)})
		}
		hist = append(hist, model.Message{Role: model.RoleAssistant, Content: "已发货。"})
	}
	tokens := e.MessageTokens(hist)
	newMsgs := []model.Message{{Role: model.RoleUser, Content: "And A-1000?"}}
	cal := NewCalibrator(nil)
	cal.Observe(1000, 1300)
	for _, window := range []int{400, 900, 1500, 3000, 100000} {
		for _, from := range []int{0, 1, 4} {
			in := PlanInput{Window: window, System: "You are a support agent.", Tools: testTools(3), Summary: "earlier: A-999",
				History: hist[from:], New: newMsgs, Calibrator: cal}
			want := e.Plan(in)
			in.HistoryTokens = tokens[from:]
			if d := cmp.Diff(want, e.Plan(in)); d != "" {
				t.Errorf("window %d, from %d: plan with kept estimates differs (-counted +kept):\n%s", window, from, d)
			}
			in.HistoryTokens = tokens[from+1:]
			if d := cmp.Diff(want, e.Plan(in)); d != "" {
				t.Errorf("window %d, from %d: kept estimates of the wrong length were used:\n%s", window, from, d)
			}
			if got, want := e.SelectHistoryCounted(hist[from:], tokens[from:], window/3), e.SelectHistory(hist[from:], window/3); got != want {
				t.Errorf("window %d, from %d: selection %+v, want %+v", window, from, got, want)
			}
		}
	}
	req := &model.Request{System: "sys", Messages: append(append([]model.Message(nil), hist...), newMsgs...), Tools: testTools(5)}
	for _, k := range []int{0, 10, len(hist)} {
		if got, want := e.RequestCounted(req, tokens[:k]), e.Request(req); got != want {
			t.Errorf("%d kept: request %d, want %d", k, got, want)
		}
	}
}

// refUnits is units as first written, with a set of the call ids: the
// oracle for the scan that replaced the set.
func refUnits(msgs []model.Message) []unit {
	var out []unit
	for i := 0; i < len(msgs); {
		m := msgs[i]
		u := unit{start: i, end: i + 1, turn: m.Role == model.RoleUser}
		switch {
		case m.Role == model.RoleAssistant && len(m.ToolCalls) > 0:
			ids := make(map[string]bool, len(m.ToolCalls))
			for _, c := range m.ToolCalls {
				ids[c.ID] = true
			}
			answered := 0
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool && ids[msgs[u.end].ToolCallID] {
				answered++
				u.end++
			}
			u.orphan = answered < len(ids)
		case m.Role == model.RoleTool:
			u.orphan = true
			for u.end < len(msgs) && msgs[u.end].Role == model.RoleTool {
				u.end++
			}
		}
		out = append(out, u)
		i = u.end
	}
	return out
}

// TestUnitsMatchReference: the units of random histories, with repeated
// call ids, missing and stray results, are those of the set-based split.
func TestUnitsMatchReference(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	seed := uint64(1)
	next := func(n int) int {
		seed = seed*6364136223846793005 + 1442695040888963407
		return int(seed>>33) % n
	}
	for round := range 2000 {
		var msgs []model.Message
		for range 1 + next(12) {
			switch next(4) {
			case 0:
				msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "q"})
			case 1:
				msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: "a"})
			case 2:
				var calls []model.ToolCall
				for range 1 + next(3) {
					calls = append(calls, model.ToolCall{ID: fmt.Sprint("c", next(3)), Name: "f"})
				}
				msgs = append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
			default:
				msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: fmt.Sprint("c", next(4)), Content: "r"})
			}
		}
		tokens := e.MessageTokens(msgs)
		got, want := units(msgs, tokens), refUnits(msgs)
		for i := range got {
			got[i].cost = 0
		}
		if d := cmp.Diff(want, got, cmp.AllowUnexported(unit{})); d != "" {
			t.Fatalf("round %d, %+v:\n%s", round, msgs, d)
		}
	}
}
