package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/openai"
	"github.com/agentapp/agentapp/model/scripted"
)

// wireRequest is as much of a chat-completions request as the fake reads.
type wireRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// request turns the wire request back into the model's, to count it.
func (w wireRequest) request() *model.Request {
	r := &model.Request{}
	for _, m := range w.Messages {
		if m.Role == "system" {
			r.System += m.Content
			continue
		}
		msg := model.Message{Role: model.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
		}
		r.Messages = append(r.Messages, msg)
	}
	for _, t := range w.Tools {
		r.Tools = append(r.Tools, model.ToolSpec{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return r
}

// fakeProvider is an OpenAI-compatible server on loopback that records
// every request and counts its prompt with a tokenizer of its own: the
// estimate times ratio, which the host does not know and must learn from
// the reported usage. A user message with "check" gets a tool call, a tool
// result gets the answer, and a summarizing call gets a summary.
type fakeProvider struct {
	srv   *httptest.Server
	est   *budget.Estimator
	ratio float64

	mu       sync.Mutex
	requests []wireRequest
	prompts  []int // the prompt tokens reported for each request
}

func newFakeProvider(t *testing.T, ratio float64) *fakeProvider {
	f := &fakeProvider{est: budget.NewEstimator(budget.LookupModel("glm-4-flash").Family), ratio: ratio}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req wireRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		prompt := int(float64(f.est.Request(req.request())) * f.ratio)
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.prompts = append(f.prompts, prompt)
		n := len(f.requests)
		f.mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		msg := map[string]any{"role": "assistant"}
		switch {
		case strings.HasPrefix(req.Messages[0].Content, "You fold"):
			msg["content"] = fmt.Sprintf("- summary %d: the user asked about orders A-1000 and on; all shipped", n)
		case last.Role == "user" && strings.Contains(last.Content, "check"):
			msg["tool_calls"] = []map[string]any{{"id": fmt.Sprintf("call-%d", n), "type": "function",
				"function": map[string]any{"name": "getOrderStatus", "arguments": `{"orderId":"A-1024"}`}}}
		default:
			msg["content"] = "订单 A-1024 已发货，预计 3 天送达。The order has shipped."
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion",
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": 17, "total_tokens": prompt + 17},
		})
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) model() model.Model {
	return openai.New(openai.Config{APIKey: "k", BaseURL: f.srv.URL + "/v1", Model: "glm-4-flash"}, openai.WithMaxAttempts(1))
}

func orderTool() *agent.Tool {
	return &agent.Tool{Name: "getOrderStatus", Description: "Look up an order by its id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string"}}}`),
		Execute: func(context.Context, json.RawMessage) (any, error) {
			return strings.Repeat(`{"status":"shipped","carrier":"SF","eta":"2026-12-05"}`, 6), nil
		}}
}

// checkPaired fails when a request has a tool message without its call
// just before it (or calls without their results).
func checkPaired(t *testing.T, i int, req wireRequest) {
	t.Helper()
	pending := map[string]bool{}
	for j, m := range req.Messages {
		switch {
		case m.Role == "tool":
			if !pending[m.ToolCallID] {
				t.Fatalf("request %d, message %d: tool result %q without its call", i, j, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		case len(pending) > 0:
			t.Fatalf("request %d, message %d: calls %v without results", i, j, pending)
		}
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
	}
}

// TestLongConversationStaysInWindow plays 200 turns, every third with a
// tool call, through a real OpenAI client against a fake provider whose
// tokenizer counts 30 % more than the estimate: every request the provider
// received is within the window by the provider's own count, none has a
// tool message without its call, older turns were folded into a stored
// summary made by the model, the transcript keeps every message, and the
// usage is the provider's.
func TestLongConversationStaysInWindow(t *testing.T) {
	ctx := context.Background()
	f := newFakeProvider(t, 1.3)
	const window = 3000
	h, err := newHost(ctx, config{Model: f.model(), Local: []*agent.Tool{orderTool()}, Store: openTestStore(t),
		System: "You are a support agent for an online shop.", Context: ContextOptions{Window: window}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var sum Usage
	foldEvents := 0
	for i := range 200 {
		text := fmt.Sprintf("第 %d 个问题：订单 A-%d 什么时候到？", i, 1000+i)
		if i%3 == 0 {
			text += " Please check it."
		}
		res, err := h.Run(ctx, Turn{Session: "s1", Messages: []model.Message{{Role: model.RoleUser, Content: text}}, OnEvent: func(ev Event) {
			if ev.Kind == EventFold {
				if ev.Fold.Messages <= 0 || ev.Fold.Window != window || ev.Fold.SummaryTokens <= 0 {
					t.Errorf("fold event %+v", ev.Fold)
				}
				foldEvents++
			}
		}})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if res.Usage.Estimated || res.Usage.InputTokens == 0 || res.Usage.OutputTokens < 17 {
			t.Fatalf("turn %d: usage %+v; want the provider's counts", i, res.Usage)
		}
		sum.InputTokens += res.Usage.InputTokens
		sum.OutputTokens += res.Usage.OutputTokens
		sum.Calls = append(sum.Calls, res.Usage.Calls...)
	}
	reply := min(budget.DefaultReply, window/8)
	summaries, withSummary := 0, 0
	reported := 0
	for i, req := range f.requests {
		if f.prompts[i]+reply > window {
			t.Errorf("request %d: %d prompt tokens by the provider's count + %d for the reply is over the window of %d", i, f.prompts[i], reply, window)
		}
		checkPaired(t, i, req)
		if strings.HasPrefix(req.Messages[0].Content, "You fold") {
			summaries++
		} else if strings.Contains(req.Messages[0].Content, "- summary ") {
			withSummary++
		}
		reported += f.prompts[i]
	}

	if summaries < 5 || withSummary < 100 {
		t.Errorf("%d summarizing calls, %d requests carrying a summary; want folds all along", summaries, withSummary)
	}
	if reported != sum.InputTokens || len(sum.Calls) != len(f.requests) {
		t.Errorf("usage: %d input tokens in %d calls, the provider reported %d in %d", sum.InputTokens, len(sum.Calls), reported, len(f.requests))
	}
	stored, _ := h.Sessions().summary(ctx, "s1")
	if !strings.HasPrefix(stored, "- summary ") {
		t.Errorf("stored summary %q; want the model's", stored)
	}
	n, _, _ := h.Sessions().Count(ctx, "s1")
	if want := 200*2 + 67*2; n != want {
		t.Errorf("the transcript holds %d messages, want all %d", n, want)
	}
	su, err := h.SessionUsage(ctx, "s1")
	if err != nil || su.InputTokens != int64(reported) || su.Calls != int64(len(f.requests)) || su.EstimatedCalls != 0 || su.Folds < 5 || su.Folds != int64(foldEvents) {
		t.Errorf("session usage %+v, %v; want %d input tokens in %d calls, %d folds as reported by events", su, err, reported, len(f.requests), foldEvents)
	}
	if r, n := h.cal.Ratio(); n == 0 || r < 1.2 || r > 1.4 {
		t.Errorf("calibration ratio %v after %d readings; want about 1.3", r, n)
	}
}

// TestEstimatedUsage: a model that reports no usage (the scripted one, like
// the offline one) gets estimated counts, marked so, on every call, and in
// the session's totals and the host's counters.
func TestEstimatedUsage(t *testing.T) {
	ctx := context.Background()
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", `{"orderId":"A-1024"}`)}},
		scripted.Turn{Text: "订单 A-1024 已发货。"},
	)
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{orderTool()}, Store: openTestStore(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.Run(ctx, Turn{Session: "e1", Messages: []model.Message{{Role: model.RoleUser, Content: "Where is A-1024?"}}})
	if err != nil {
		t.Fatal(err)
	}
	u := res.Usage
	if !u.Estimated || len(u.Calls) != 2 || u.InputTokens <= 0 || u.OutputTokens <= 0 {
		t.Fatalf("usage %+v; want two estimated calls with tokens", u)
	}
	if u.Calls[1].InputTokens <= u.Calls[0].InputTokens {
		t.Errorf("the second call carries the tool result but is estimated at %d <= %d", u.Calls[1].InputTokens, u.Calls[0].InputTokens)
	}
	su, _ := h.SessionUsage(ctx, "e1")
	if su.InputTokens != int64(u.InputTokens) || su.OutputTokens != int64(u.OutputTokens) || su.EstimatedCalls != 2 {
		t.Errorf("session usage %+v; want the turn's %+v, two estimated calls", su, u)
	}
	counts := h.TokenCounts()
	if len(counts) != 2 || counts[0].Kind != "input" || counts[0].Tokens != int64(u.InputTokens) || counts[0].Estimated != counts[0].Tokens || counts[1].Tokens != int64(u.OutputTokens) {
		t.Errorf("token counts %+v; want the turn's, all estimated", counts)
	}
}

// TestRequestTooLarge: a request that cannot fit even with the history
// folded fails before the model is called, says what is largest, names
// the hint, and stores nothing.
func TestRequestTooLarge(t *testing.T) {
	ctx := context.Background()
	m := scripted.New(scripted.Turn{Text: "never"})
	h, err := newHost(ctx, config{Model: m, Store: openTestStore(t), System: strings.Repeat("Always be polite and precise. ", 400),
		Context: ContextOptions{Window: 2000}, Hints: Hints{ContextWindow: "raise --context-window"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	_, err = h.Run(ctx, Turn{Session: "big", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	var ce *ContextError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "the system prompt") || !strings.Contains(err.Error(), "raise --context-window") || !strings.Contains(err.Error(), "2000") {
		t.Fatalf("err = %v; want a ContextError naming the system prompt, the window and the hint", err)
	}
	if n, ok, _ := h.Sessions().Count(ctx, "big"); ok || n != 0 {
		t.Errorf("the session was stored (%d messages)", n)
	}
	if len(m.Requests()) != 0 {
		t.Errorf("the model was called %d times", len(m.Requests()))
	}
}

// TestCompact folds all but the latest turn on demand, with the
// extractive summarizer configured (the offline model's); the next request
// carries the summary and only the latest turn before the new message.
func TestCompact(t *testing.T) {
	ctx := context.Background()
	var turns []scripted.Turn
	for i := range 6 {
		turns = append(turns, scripted.Turn{Text: fmt.Sprintf("订单 A-%d 已发货。", 1000+i)})
	}
	m := scripted.New(turns...)
	h, err := newHost(ctx, config{Model: m, Store: openTestStore(t), Context: ContextOptions{Summarizer: budget.Extractive{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i := range 5 {
		if _, err := h.Run(ctx, Turn{Session: "c", Messages: []model.Message{{Role: model.RoleUser, Content: fmt.Sprintf("Where is A-%d?", 1000+i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.Compact(ctx, "c")
	if err != nil || res.Folded != 8 || res.Kept != 2 || res.SummaryTokens == 0 {
		t.Fatalf("Compact = %+v, %v; want 8 folded, 2 kept", res, err)
	}
	if _, err := h.Run(ctx, Turn{Session: "c", Messages: []model.Message{{Role: model.RoleUser, Content: "And A-1000?"}}}); err != nil {
		t.Fatal(err)
	}
	reqs := m.Requests()
	last := reqs[len(reqs)-1]
	if len(last.Messages) != 3 || !strings.Contains(last.System, "- user: Where is A-1000?") || !strings.Contains(last.System, "A-1000") {
		t.Errorf("after /compact the model saw %d messages and system %q; want the latest turn, the new message and the summary", len(last.Messages), last.System)
	}
	if n, _, _ := h.Sessions().Count(ctx, "c"); n != 12 {
		t.Errorf("the transcript holds %d messages, want 12", n)
	}
	if again, _ := h.Compact(ctx, "c"); again.Folded != 2 {
		t.Errorf("a second Compact folded %d, want the 2 messages of the turn before the latest", again.Folded)
	}
}

// TestFailedTurnUsageCounted: a turn that fails after its model calls
// stores none of its messages, but its calls cost tokens and count in the
// session's totals.
func TestFailedTurnUsageCounted(t *testing.T) {
	ctx := context.Background()
	call := scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", `{"orderId":"A-1024"}`)}}
	m := scripted.New(scripted.Turn{Text: "hello"}, call, call)
	h, err := newHost(ctx, config{Model: m, Local: []*agent.Tool{orderTool()}, Store: openTestStore(t), MaxSteps: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ok, err := h.Run(ctx, Turn{Session: "f", Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Run(ctx, Turn{Session: "f", Messages: []model.Message{{Role: model.RoleUser, Content: "Where is A-1024?"}}}); !errors.Is(err, agent.ErrMaxSteps) {
		t.Fatalf("err = %v, want the step limit", err)
	}
	su, _ := h.SessionUsage(ctx, "f")
	if su.Calls != 3 || su.InputTokens <= int64(ok.Usage.InputTokens) {
		t.Errorf("session usage %+v after one answered and one failed turn; want 3 calls, more input than the first turn's %d", su, ok.Usage.InputTokens)
	}
	if n, _, _ := h.Sessions().Count(ctx, "f"); n != 2 {
		t.Errorf("%d messages stored, want the first turn's 2", n)
	}
}
