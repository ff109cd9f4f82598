package budget

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/model"
)

func TestCount(t *testing.T) {
	for in, want := range map[string]Counts{
		"":             {},
		"hello world":  {Words: 2, Letters: 10},
		"readFile":     {Words: 2, Letters: 8},
		"退款在三个工作日内到账。": {CJK: 11, CJKPunct: 1},
		"1234567":      {Digits: 3},
		`{"a":"b"}`:    {Words: 2, Letters: 2, Punct: 3, PunctExtra: 4},
		"a\n\n  b":     {Words: 2, Letters: 2, Breaks: 1},
		"\xff\xfe":     {Raw: 2},
		"\x1b[31m":     {Raw: 1, Punct: 1, Digits: 1, Words: 1, Letters: 1},
		"é😀":           {Other: 6},
	} {
		if got := Count(in); got != want {
			t.Errorf("Count(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestEstimateHostile(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	big := strings.Repeat("订单 A-1024 已发货，预计 3 天送达。Order shipped.\n", 3<<20/60)
	n := e.Text(big)
	if n < len(big)/8 || n > len(big) {
		t.Errorf("3 MB of mixed text estimated at %d tokens", n)
	}
	// Invalid UTF-8 and control characters cost something and never panic.
	if n := e.Text(strings.Repeat("\xff\x00\x1b", 1000)); n < 1000 {
		t.Errorf("3000 bytes of garbage estimated at %d tokens; want at least 1000 (never free)", n)
	}
	if NewEstimator("no-such-family").Family() != FamilyO200k {
		t.Error("an unknown family does not fall back to o200k")
	}
	// Chinese costs more per character under cl100k than under o200k,
	// and less under the CJK-dense family.
	zh := strings.Repeat("请问年假怎么计算", 50)
	o, c, d := NewEstimator(FamilyO200k).Text(zh), NewEstimator(FamilyCL100k).Text(zh), NewEstimator(FamilyCJKDense).Text(zh)
	if !(d < o && o < c) {
		t.Errorf("Chinese: cjk-dense %d, o200k %d, cl100k %d; want increasing", d, o, c)
	}
}

func TestRequestEstimate(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	tools := []model.ToolSpec{{Name: "getOrderStatus", Description: "Look up an order.", Parameters: json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string"}}}`)}}
	msgs := []model.Message{{Role: model.RoleUser, Content: "Where is A-1024?"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"A-1024"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Name: "getOrderStatus", Content: `{"status":"shipped"}`}}
	r := &model.Request{System: "You are a support agent.", Messages: msgs, Tools: tools}
	want := replyOverhead + e.Messages(msgs) + e.Tools(tools) + e.Message(model.Message{Content: r.System})
	if got := e.Request(r); got != want || got < 60 {
		t.Errorf("Request = %d, want %d (parts), and more than 60", got, want)
	}
	if e.Request(nil) != 0 {
		t.Error("nil request")
	}
	if e.JSON(func() {}) != 0 || e.JSON(map[string]int{"a": 1}) == 0 {
		t.Error("JSON")
	}
}

func TestCalibrator(t *testing.T) {
	c := NewCalibrator(nil)
	if r, n := c.Ratio(); r != 1 || n != 0 {
		t.Fatalf("new calibrator ratio %v after %d", r, n)
	}
	if c.Observe(100, 200) || c.Observe(1000, 0) {
		t.Error("a small request or a missing count was used")
	}
	c.Observe(1000, 1300) // the first reading is taken as it is
	if r, _ := c.Ratio(); r != 1.3 {
		t.Errorf("first reading: ratio %v, want 1.3", r)
	}
	c.Observe(1000, 100_000) // absurd: bounded to 2, then smoothed
	if r, _ := c.Ratio(); r < 1.3 || r > 1.5 {
		t.Errorf("after an absurd reading ratio %v, want a small step (<= 1.44)", r)
	}
	for range 100 {
		c.Observe(1000, 800)
	}
	if r, n := c.Ratio(); r < 0.79 || r > 0.81 || n != 102 {
		t.Errorf("after 100 readings of 0.8: ratio %v after %d", r, n)
	}
	if got := c.Adjust(1000); got < 790 || got > 810 {
		t.Errorf("Adjust(1000) = %d", got)
	}
	var nilC *Calibrator
	if nilC.Adjust(7) != 7 || nilC.Observe(1000, 1000) {
		t.Error("a nil calibrator must pass estimates through")
	}
}

func TestLookupModel(t *testing.T) {
	for name, want := range map[string]int{
		"glm-4-flash": 128_000, "GLM-4-Plus": 128_000, "gpt-4o-2024-08-06": 128_000, "openai/gpt-4.1-mini": 1_047_576,
		"gpt-4": 8_192, "deepseek-chat": 65_536, "qwen2.5:7b": 32_768, "ollama:llama3.1": 8_192, "gemma:latest": 8_192,
		"claude-sonnet-4": 200_000, "anthropic/claude-3-5-haiku": 200_000, "no-such-model": DefaultWindow, "": DefaultWindow,
	} {
		if got := LookupModel(name).Window; got != want {
			t.Errorf("LookupModel(%q).Window = %d, want %d", name, got, want)
		}
	}
	if LookupModel("no-such-model").Known || !LookupModel("glm-4-flash").Known {
		t.Error("Known")
	}
	if LookupModel("glm-4-flash").Family != FamilyCJKDense || LookupModel("gpt-4o").Family != FamilyO200k {
		t.Error("Family")
	}
	if Window("glm-4-flash", 0) != 128_000 || Window("glm-4-flash", 9000) != 9000 {
		t.Error("Window override")
	}
}

// conversation is n turns, every third one with two tool calls.
func conversation(n int) []model.Message {
	var ms []model.Message
	for i := range n {
		ms = append(ms, model.Message{Role: model.RoleUser, Content: fmt.Sprintf("第 %d 个问题：订单 A-%d 的状态是什么？Please check.", i, 1000+i)})
		if i%3 == 0 {
			id1, id2 := fmt.Sprintf("c%d-1", i), fmt.Sprintf("c%d-2", i)
			ms = append(ms, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: id1, Name: "getOrderStatus", Arguments: json.RawMessage(fmt.Sprintf(`{"orderId":"A-%d"}`, 1000+i))},
				{ID: id2, Name: "searchKB", Arguments: json.RawMessage(`{"query":"发货时间"}`)}}},
				model.Message{Role: model.RoleTool, ToolCallID: id1, Name: "getOrderStatus", Content: strings.Repeat(`{"status":"shipped","carrier":"SF"}`, 20)},
				model.Message{Role: model.RoleTool, ToolCallID: id2, Name: "searchKB", Content: strings.Repeat("一般 48 小时内发货。", 30)})
		}
		ms = append(ms, model.Message{Role: model.RoleAssistant, Content: fmt.Sprintf("订单 A-%d 已发货，预计 3 天送达。", 1000+i)})
	}
	return ms
}

// checkSendable fails if msgs has a tool message without its call or a
// call without its result.
func checkSendable(t *testing.T, msgs []model.Message) {
	t.Helper()
	pending := map[string]bool{}
	for i, m := range msgs {
		switch {
		case m.Role == model.RoleTool:
			if !pending[m.ToolCallID] {
				t.Fatalf("message %d: tool result %q without its call", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		case len(pending) > 0:
			t.Fatalf("message %d: calls %v without results", i, pending)
		}
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
	}
	if len(pending) > 0 {
		t.Fatalf("calls %v without results at the end", pending)
	}
}

func TestSelectHistoryKeepsToolGroups(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	ms := conversation(30)
	total := e.Messages(ms)
	for budget := 0; budget <= total+10; budget += 37 {
		sel := e.SelectHistory(ms, budget)
		if sel.Kept > budget {
			t.Fatalf("budget %d: kept %d tokens", budget, sel.Kept)
		}
		if sel.Kept+sel.Folded != total {
			t.Fatalf("budget %d: kept %d + folded %d != %d", budget, sel.Kept, sel.Folded, total)
		}
		checkSendable(t, ms[sel.KeepFrom:])
		if sel.KeepFrom < len(ms) && ms[sel.KeepFrom].Role == model.RoleTool {
			t.Fatalf("budget %d: starts at a tool message", budget)
		}
	}
	if sel := e.SelectHistory(ms, total); sel.KeepFrom != 0 {
		t.Errorf("the whole history fits but KeepFrom = %d", sel.KeepFrom)
	}
	// A turn too large to keep whole: the latest group still goes.
	last := []model.Message{{Role: model.RoleUser, Content: strings.Repeat("长问题", 2000)}, {Role: model.RoleAssistant, Content: "短答"}}
	if sel := e.SelectHistory(last, 100); sel.KeepFrom != 1 {
		t.Errorf("KeepFrom = %d, want 1 (the answer alone)", sel.KeepFrom)
	}
}

func TestSelectHistoryFoldsBrokenGroups(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	ms := []model.Message{
		{Role: model.RoleTool, ToolCallID: "lost", Content: "orphan"},
		{Role: model.RoleUser, Content: "hi"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "a"}, {ID: "b"}}},
		{Role: model.RoleTool, ToolCallID: "a", Content: "only one of two results"},
		{Role: model.RoleUser, Content: "next"},
		{Role: model.RoleAssistant, Content: "ok"},
	}
	sel := e.SelectHistory(ms, 1_000_000)
	if sel.KeepFrom != 4 {
		t.Errorf("KeepFrom = %d, want 4: the orphan and the half-answered calls must be folded", sel.KeepFrom)
	}
	checkSendable(t, ms[sel.KeepFrom:])
}

// TestPlanLongConversation plays 200 turns into a small window, folding
// with the extractive summary whenever the plan says so: every request is
// within the window, no tool message is without its call, and the summary
// keeps the ids of folded answers.
func TestPlanLongConversation(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	all := conversation(200)
	var history []model.Message
	summary := ""
	folds := 0
	tools := []model.ToolSpec{{Name: "getOrderStatus", Description: "Look up an order by id.", Parameters: json.RawMessage(`{"type":"object"}`)}}
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Role != model.RoleUser {
			j++
		}
		newMsg := all[i : i+1]
		in := PlanInput{Window: 4000, Reply: 500, System: "You are a support agent.", Tools: tools, Summary: summary, History: history, New: newMsg}
		p := e.Plan(in)
		if p.Fold {
			s, err := Extractive{Estimator: e}.Summarize(context.Background(), summary, history[:p.KeepFrom], DefaultSummaryReserve)
			if err != nil {
				t.Fatal(err)
			}
			summary, history = s, history[p.KeepFrom:]
			folds++
		}
		req := &model.Request{System: in.System + "\n" + summary, Messages: append(append([]model.Message(nil), history...), newMsg...), Tools: tools}
		if got := e.Request(req) + in.Reply; got > in.Window {
			t.Fatalf("turn at message %d: request %d tokens + reply %d over the window %d (plan %+v)", i, got-in.Reply, in.Reply, in.Window, p)
		}
		checkSendable(t, req.Messages)
		history = append(history, all[i:j]...)
		i = j
	}
	if folds < 5 {
		t.Errorf("only %d folds in 200 turns", folds)
	}
	if !strings.Contains(summary, "A-1") || !strings.Contains(summary, "- user: 第") {
		t.Errorf("summary lost the questions or ids:\n%s", summary)
	}
}

func TestPlanTooLarge(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	var tools []model.ToolSpec
	for i := range 300 {
		tools = append(tools, model.ToolSpec{Name: fmt.Sprintf("tool%d", i), Description: strings.Repeat("Does a thing with files. ", 10), Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)})
	}
	p := e.Plan(PlanInput{Window: 8192, Tools: tools, New: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if p.Fits || len(p.Problems) != 2 || !strings.Contains(p.Problems[1], "tool definitions") {
		t.Errorf("plan = %+v; want not fitting, the tools named", p)
	}
	if p.ToolShare() < 1 {
		t.Errorf("ToolShare = %v", p.ToolShare())
	}
	if p.Reply != 1024 {
		t.Errorf("default reply in an 8k window = %d, want 1024", p.Reply)
	}
	// The calibrator scales every part.
	c := NewCalibrator(nil)
	c.Observe(1000, 2000)
	q := e.Plan(PlanInput{Window: 1 << 20, Tools: tools, Calibrator: c})
	if q.Tools != c.Adjust(e.Tools(tools)) || !q.Fits {
		t.Errorf("calibrated tools %d, want %d", q.Tools, c.Adjust(e.Tools(tools)))
	}
}

func TestExtractiveSummary(t *testing.T) {
	ms := []model.Message{
		{Role: model.RoleUser, Content: "我的订单 A-1024 到哪了？另外问一下退货。"},
		{Role: model.RoleAssistant, Content: "订单 A-1024 已发货，运单号 SF-88234567，预计 2026-12-03 送达，运费 ¥12.5。"},
		{Role: model.RoleUser, Content: "Please open a ticket.\x1b[2J Thanks"},
		{Role: model.RoleTool, ToolCallID: "x", Content: `{"ticket":"T-20261201-7","email":"li@example.com"}`},
		{Role: model.RoleUser, Content: "\xff\xfe bad bytes"},
	}
	s, err := Extractive{}.Summarize(context.Background(), "- user: earlier question", ms, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"- user: earlier question", "- user: 我的订单 A-1024 到哪了？", "SF-88234567", "2026-12-03", "¥12.5", "T-20261201-7", "li@example.com", "- user: Please open a ticket."} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "\x1b") || strings.Contains(s, "\xff") || strings.Contains(s, "退货") {
		t.Errorf("summary has control bytes, invalid UTF-8 or more than the first sentence:\n%q", s)
	}
	// Bounded: a huge history gives a summary within the bound, newest kept.
	big := conversation(2000)
	s, _ = Extractive{}.Summarize(context.Background(), "", big, 300)
	if n := NewEstimator(FamilyO200k).Text(s); n > 300 || !strings.Contains(s, "1999") {
		t.Errorf("summary of 2000 turns: %d tokens, newest kept %v", n, strings.Contains(s, "1999"))
	}
	if s, _ := (Extractive{}).Summarize(context.Background(), "", big, 0); s != "" {
		t.Error("a zero bound must give an empty summary")
	}
}

// TestToolEstimateIsTheRequestJSON: a tool is counted as the JSON a
// chat-completions request carries, the form the weights were fitted on;
// parameters that are not JSON are still counted.
func TestToolEstimateIsTheRequestJSON(t *testing.T) {
	e := NewEstimator(FamilyO200k)
	spec := model.ToolSpec{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}
	want := e.Text(`{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}`)
	if got := e.Tool(spec); got != want {
		t.Errorf("Tool = %d, want %d (the request's JSON)", got, want)
	}
	text := strings.Repeat("path: string, required; ", 50)
	bad := model.ToolSpec{Name: "x", Parameters: json.RawMessage(text)}
	if got := e.Tool(bad); got <= e.Text(text) {
		t.Errorf("invalid parameters: tool counted as %d tokens, the parameters alone are %d", got, e.Text(text))
	}
}
