package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/model"
)

var orderTool = model.ToolSpec{
	Name:        "getOrderStatus",
	Description: "Look up an order",
	Parameters:  json.RawMessage(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}`),
}

func userRequest(text string) *model.Request {
	return &model.Request{
		System:   "You are a customer-service assistant.",
		Messages: []model.Message{{Role: model.RoleUser, Content: text}},
		Tools:    []model.ToolSpec{orderTool},
	}
}

func TestGenerateToolCall(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"getOrderStatus","arguments":"{\"orderId\":\"A-1024\"}"}}]}`,
		"tool_calls")))
	m := f.model()
	resp, err := m.Generate(context.Background(), userRequest("where is A-1024?"))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
		{ID: "call_1", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"A-1024"}`)},
	}}
	if !reflect.DeepEqual(resp.Message, want) {
		t.Errorf("message = %+v, want %+v", resp.Message, want)
	}
	if resp.FinishReason != "tool_calls" || resp.Usage != (model.Usage{InputTokens: 11, OutputTokens: 7}) {
		t.Errorf("finish %q usage %+v", resp.FinishReason, resp.Usage)
	}

	// The request: path, key, model, system message first, then the user's.
	if f.paths[0] != "/api/paas/v4/chat/completions" {
		t.Errorf("path = %s", f.paths[0])
	}
	if got := f.headers[0].Get("Authorization"); got != "Bearer test-key" {
		t.Errorf("Authorization = %q", got)
	}
	body := f.body(0)
	if body["model"] != "glm-4-flash" || body["stream"] != nil {
		t.Errorf("model %v stream %v", body["model"], body["stream"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || msgs[1].(map[string]any)["content"] != "where is A-1024?" {
		t.Errorf("messages = %v", msgs)
	}
}

func TestGenerateText(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"Hello!"}`, "stop")))
	resp, err := f.model().Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Hello!" || len(resp.Message.ToolCalls) != 0 || resp.FinishReason != "stop" {
		t.Errorf("resp = %+v", resp)
	}
	if _, ok := f.body(0)["tools"]; ok {
		t.Error("a request without tools sent a tools field")
	}
	if _, ok := f.body(0)["max_tokens"]; ok {
		t.Error("a request without MaxTokens sent max_tokens")
	}
}

// TestMaxTokensReachesTheProvider: the cap on a sampling request is sent,
// so the provider, not only the approval prompt, enforces it.
func TestMaxTokensReachesTheProvider(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"ok"}`, "stop")))
	_, err := f.model().Generate(context.Background(), &model.Request{MaxTokens: 123, Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.body(0)["max_tokens"]; got != float64(123) {
		t.Errorf("max_tokens = %v, want 123", got)
	}
}

func TestStreamOpenAIStyleToolCallDeltas(t *testing.T) {
	f := newFakeProvider(t, replySSE(
		chunk(`{"role":"assistant","content":null}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"getOrderStatus","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"order"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"Id\": \"A-"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"1024\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"getOrderStatus","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"orderId\""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":":\"B-0001\"}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
	))
	var texts []string
	resp, err := f.model().Stream(context.Background(), userRequest("A-1024 and B-0001?"), func(s string) { texts = append(texts, s) })
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{
		{ID: "call_a", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId": "A-1024"}`)},
		{ID: "call_b", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"B-0001"}`)},
	}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("calls = %s", jsonOf(resp.Message.ToolCalls))
	}
	if len(texts) != 0 || resp.Message.Content != "" || resp.FinishReason != "tool_calls" {
		t.Errorf("texts %q content %q finish %q", texts, resp.Message.Content, resp.FinishReason)
	}
	if so, _ := f.body(0)["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v; want include_usage, or the provider reports no usage", f.body(0)["stream_options"])
	}
	if f.body(0)["stream"] != true {
		t.Error("request was not streamed")
	}
}

func TestStreamGLMStyleSingleChunkToolCall(t *testing.T) {
	f := newFakeProvider(t, replySSE(
		chunk(`{"role":"assistant","tool_calls":[{"id":"call_-8960","index":0,"type":"function","function":{"name":"getOrderStatus","arguments":"{\"orderId\": \"A-1024\"}"}}]}`, ""),
		`{"id":"chatcmpl-1","created":1,"model":"glm-4-flash","choices":[{"index":0,"finish_reason":"tool_calls","delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":150,"completion_tokens":12,"total_tokens":162}}`,
	))
	resp, err := f.model().Stream(context.Background(), userRequest("where is A-1024?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{{ID: "call_-8960", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId": "A-1024"}`)}}
	if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
		t.Errorf("calls = %s", jsonOf(resp.Message.ToolCalls))
	}
	if resp.Usage != (model.Usage{InputTokens: 150, OutputTokens: 12}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// Several whole calls in one chunk, all at index 0 or without an index, are
// still separate calls (told apart by their ids).
func TestStreamWholeCallsInOneChunk(t *testing.T) {
	for name, calls := range map[string]string{
		"same index": `[{"index":0,"id":"c1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},{"index":0,"id":"c2","type":"function","function":{"name":"b","arguments":"{}"}}]`,
		"no index":   `[{"id":"c1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},{"id":"c2","type":"function","function":{"name":"b","arguments":""}}]`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeProvider(t, replySSE(chunk(`{"role":"assistant","tool_calls":`+calls+`}`, "tool_calls")))
			resp, err := f.model().Stream(context.Background(), userRequest("x"), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []model.ToolCall{
				{ID: "c1", Name: "a", Arguments: json.RawMessage(`{"x":1}`)},
				{ID: "c2", Name: "b", Arguments: json.RawMessage(`{}`)},
			}
			if !reflect.DeepEqual(resp.Message.ToolCalls, want) {
				t.Errorf("calls = %s", jsonOf(resp.Message.ToolCalls))
			}
		})
	}
}

func TestStreamTextDeltas(t *testing.T) {
	f := newFakeProvider(t, replySSE(
		chunk(`{"role":"assistant","content":""}`, ""),
		chunk(`{"content":"您好，"}`, ""),
		chunk(`{"content":"订单 A-1024 "}`, ""),
		chunk(`{"content":"已发货。"}`, ""),
		chunk(`{}`, "stop"),
	))
	var texts []string
	resp, err := f.model().Stream(context.Background(), userRequest("A-1024?"), func(s string) { texts = append(texts, s) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"您好，", "订单 A-1024 ", "已发货。"}; !reflect.DeepEqual(texts, want) {
		t.Errorf("deltas = %q, want %q", texts, want)
	}
	if resp.Message.Content != "您好，订单 A-1024 已发货。" || resp.FinishReason != "stop" || len(resp.Message.ToolCalls) != 0 {
		t.Errorf("resp = %+v", resp)
	}
}

func TestUnauthorizedShowsProviderMessage(t *testing.T) {
	f := newFakeProvider(t, replyJSON(401, `{"error":{"code":"1000","message":"身份验证失败。"}}`))
	_, err := f.model().Generate(context.Background(), userRequest("hi"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %T %v, want *APIError", err, err)
	}
	if apiErr.Status != 401 || apiErr.Code != "1000" || apiErr.Message != "身份验证失败。" {
		t.Errorf("apiErr = %+v", apiErr)
	}
	mustContain(t, err.Error(), "401", "身份验证失败。", "code 1000", "OPENAI_API_KEY")
	if n := f.requests(); n != 1 {
		t.Errorf("401 made %d requests, want 1", n)
	}
}

func TestGLMQuota429NotRetried(t *testing.T) {
	for _, code := range []string{"1113", "1112"} {
		for _, streamed := range []bool{false, true} {
			f := newFakeProvider(t, replyJSON(429, `{"error":{"code":"`+code+`","message":"您的账户已欠费，请充值后重试。"}}`))
			m := f.model()
			var err error
			if streamed {
				_, err = m.Stream(context.Background(), userRequest("hi"), nil)
			} else {
				_, err = m.Generate(context.Background(), userRequest("hi"))
			}
			if n := f.requests(); n != 1 {
				t.Errorf("code %s streamed=%v: %d requests, want exactly 1", code, streamed, n)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.Retryable() {
				t.Fatalf("err = %v", err)
			}
			mustContain(t, err.Error(), "429", "您的账户已欠费", "code "+code, "not retried")
		}
	}
}

func TestRateLimit429IsRetried(t *testing.T) {
	f := newFakeProvider(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "2")
			replyJSON(429, `{"error":{"code":"1302","message":"您当前使用该API的并发数过高"}}`)(w, r)
		},
		replyJSON(200, completion(`{"role":"assistant","content":"ok"}`, "stop")),
	)
	var waits []time.Duration
	m := f.model(WithBackoff(func(attempt int, err *APIError) time.Duration {
		waits = append(waits, err.RetryAfter)
		return 0
	}))
	resp, err := m.Generate(context.Background(), userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || f.requests() != 2 {
		t.Errorf("content %q after %d requests", resp.Message.Content, f.requests())
	}
	if !reflect.DeepEqual(waits, []time.Duration{2 * time.Second}) {
		t.Errorf("backoff saw Retry-After %v", waits)
	}
}

func TestServerErrorRetriedThenSucceeds(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		ok := replyJSON(200, completion(`{"role":"assistant","content":"recovered"}`, "stop"))
		if streamed {
			ok = replySSE(chunk(`{"content":"recovered"}`, "stop"))
		}
		f := newFakeProvider(t, replyJSON(500, `{"error":{"message":"internal error","type":"server_error"}}`), ok)
		var attempts []int
		m := f.model(WithBackoff(func(attempt int, err *APIError) time.Duration {
			attempts = append(attempts, attempt)
			if err.Status != 500 {
				t.Errorf("backoff got %+v", err)
			}
			return time.Millisecond
		}))
		var resp *model.Response
		var err error
		if streamed {
			resp, err = m.Stream(context.Background(), userRequest("hi"), nil)
		} else {
			resp, err = m.Generate(context.Background(), userRequest("hi"))
		}
		if err != nil {
			t.Fatalf("streamed=%v: %v", streamed, err)
		}
		if resp.Message.Content != "recovered" || f.requests() != 2 || !reflect.DeepEqual(attempts, []int{1}) {
			t.Errorf("streamed=%v: content %q, %d requests, backoff attempts %v", streamed, resp.Message.Content, f.requests(), attempts)
		}
	}
}

func TestServerErrorGivesUpAfterMaxAttempts(t *testing.T) {
	f := newFakeProvider(t, replyJSON(503, `{"error":{"message":"overloaded"}}`))
	_, err := f.model(WithMaxAttempts(4)).Generate(context.Background(), userRequest("hi"))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Attempts != 4 || f.requests() != 4 {
		t.Fatalf("err = %v (%d requests)", err, f.requests())
	}
	mustContain(t, err.Error(), "503", "overloaded", "after 4 attempts")
}

// An error event inside a stream that has already started is reported with
// the provider's message and not retried.
func TestStreamErrorEventNotRetried(t *testing.T) {
	f := newFakeProvider(t, replySSE(
		chunk(`{"content":"partial "}`, ""),
		`{"error":{"code":"1301","message":"系统检测到输入或生成内容可能包含不安全或敏感内容"}}`,
	))
	var texts []string
	_, err := f.model().Stream(context.Background(), userRequest("hi"), func(s string) { texts = append(texts, s) })
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Code != "1301" {
		t.Fatalf("err = %v", err)
	}
	mustContain(t, err.Error(), "不安全或敏感内容", "code 1301")
	if f.requests() != 1 || !reflect.DeepEqual(texts, []string{"partial "}) {
		t.Errorf("%d requests, texts %q", f.requests(), texts)
	}
}

// Bodies in other shapes still give status and message (Ollama's
// {"error":"…"} among them).
func TestErrorBodyShapes(t *testing.T) {
	for _, tc := range []struct {
		status       int
		body         string
		code, substr string
	}{
		{404, `{"error":"model \"qwen9\" not found, try pulling it first"}`, "", `model "qwen9" not found`},
		{400, `{"error":{"code":400,"message":"bad tools"}}`, "400", "bad tools"},
		{422, `{"detail":[{"loc":["body","messages"],"msg":"field required"}]}`, "", "field required"},
		{502, `<html>Bad Gateway</html>`, "", "<html>Bad Gateway</html>"},
	} {
		f := newFakeProvider(t, replyJSON(tc.status, tc.body))
		_, err := f.model(WithMaxAttempts(1)).Generate(context.Background(), userRequest("hi"))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != tc.status || apiErr.Code != tc.code {
			t.Errorf("%s: err = %#v", tc.body, err)
			continue
		}
		mustContain(t, err.Error(), tc.substr)
		if n := f.requests(); n != 1 { // only our retry rule repeats requests
			t.Errorf("%s: %d requests with WithMaxAttempts(1)", tc.body, n)
		}
	}
}

func TestNotFoundHintNamesModelAndBaseURL(t *testing.T) {
	f := newFakeProvider(t, replyJSON(404, `{"error":{"message":"The model does not exist"}}`))
	_, err := f.model().Generate(context.Background(), userRequest("hi"))
	mustContain(t, err.Error(), "OPENAI_MODEL", `"glm-4-flash"`, "OPENAI_BASE_URL", f.srv.URL)
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	m := New(Config{APIKey: "k", BaseURL: "http://" + addr + "/v1", Model: "llama3"}, WithBackoff(noWait))
	_, err = m.Generate(context.Background(), userRequest("hi"))
	var ce *ConnectionError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %T %v", err, err)
	}
	mustContain(t, err.Error(), "http://"+addr+"/v1", "OPENAI_BASE_URL")
}

// A context deadline ends a stream that hangs; no request timeout is involved.
func TestContextDeadlineStopsHangingStream(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("data: " + chunk(`{"content":"thinking…"}`, "") + "\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.model().Stream(ctx, userRequest("hi"), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %T %v", err, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// Cancelling during the wait between attempts returns promptly.
func TestCancelDuringBackoff(t *testing.T) {
	f := newFakeProvider(t, replyJSON(500, `{"error":{"message":"boom"}}`))
	ctx, cancel := context.WithCancel(context.Background())
	m := f.model(WithBackoff(func(int, *APIError) time.Duration {
		cancel()
		return time.Hour
	}))
	_, err := m.Generate(ctx, userRequest("hi"))
	if !errors.Is(err, context.Canceled) || f.requests() != 1 {
		t.Fatalf("err = %v after %d requests", err, f.requests())
	}
}

func TestAssistantToolCallMessageHasNoContentField(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"A-1024 已发货"}`, "stop")))
	req := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleUser, Content: "A-1024?"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "getOrderStatus", Arguments: json.RawMessage(`{"orderId":"A-1024"}`)}}},
			{Role: model.RoleTool, ToolCallID: "call_1", Name: "getOrderStatus", Content: `{"status":"已发货"}`},
			{Role: model.RoleAssistant, Content: "Let me check again.", ToolCalls: []model.ToolCall{{ID: "call_2", Name: "getOrderStatus"}}},
			{Role: model.RoleTool, ToolCallID: "call_2", Content: `{"status":"已发货"}`},
		},
		Tools: []model.ToolSpec{orderTool},
	}
	if _, err := f.model().Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	msgs := f.body(0)["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages = %v", msgs)
	}
	empty := msgs[1].(map[string]any)
	if _, has := empty["content"]; has {
		t.Errorf("tool-call message with empty content sent a content field: %v", empty)
	}
	call := empty["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "call_1" || call["type"] != "function" || fn["name"] != "getOrderStatus" || fn["arguments"] != `{"orderId":"A-1024"}` {
		t.Errorf("tool call = %v", call)
	}
	tool := msgs[2].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != `{"status":"已发货"}` {
		t.Errorf("tool message = %v", tool)
	}
	withText := msgs[3].(map[string]any)
	if withText["content"] != "Let me check again." {
		t.Errorf("content of a tool-call message with text = %v", withText["content"])
	}
	if args := withText["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)["arguments"]; args != "{}" {
		t.Errorf("absent arguments sent as %v, want {}", args)
	}
}

func TestToolsCarrySanitizedSchemas(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"ok"}`, "stop")))
	raw := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"zeta":{"type":"array"},"alpha":{"$ref":"#/$defs/Name"}},"required":null},"Name":{"type":"string","description":"a name"}}}`)
	before := string(raw)
	req := &model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}},
		Tools:    []model.ToolSpec{{Name: "t", Description: "d", Parameters: raw}, {Name: "bare"}},
	}
	if _, err := f.model().Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if string(raw) != before {
		t.Error("the request builder modified the tool's schema")
	}
	var body struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(f.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Tools) != 2 || body.Tools[0].Type != "function" || body.Tools[0].Function.Name != "t" || body.Tools[0].Function.Description != "d" {
		t.Fatalf("tools = %s", f.bodies[0])
	}
	want := `{"type":"object","properties":{"zeta":{"type":"array","items":{}},"alpha":{"type":"string","description":"a name"}}}`
	if got := compact(t, body.Tools[0].Function.Parameters); got != want {
		t.Errorf("parameters =\n%s\nwant\n%s", got, want)
	}
	if got := compact(t, body.Tools[1].Function.Parameters); got != `{"type":"object","properties":{}}` {
		t.Errorf("absent schema sent as %s", got)
	}
}

func TestUnknownRoleIsAnError(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(`{"role":"assistant","content":"ok"}`, "stop")))
	_, err := f.model().Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: "robot", Content: "x"}}})
	if err == nil || !strings.Contains(err.Error(), `"robot"`) || f.requests() != 0 {
		t.Errorf("err = %v, %d requests", err, f.requests())
	}
}

func TestMalformedArgumentsStayValidJSON(t *testing.T) {
	f := newFakeProvider(t, replyJSON(200, completion(
		`{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"getOrderStatus","arguments":"{\"orderId\": \"A-10"}}]}`, "tool_calls")))
	resp, err := f.model().Generate(context.Background(), userRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	args := resp.Message.ToolCalls[0].Arguments
	if !json.Valid(args) || argumentsText(args) != `{"orderId": "A-10` {
		t.Errorf("arguments = %s", args)
	}
}

func TestNewDefaults(t *testing.T) {
	m := New(Config{APIKey: "k"})
	if m.Name() != DefaultModel || m.Config().BaseURL != DefaultBaseURL {
		t.Errorf("defaults: %v", m.Config())
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	v, err := decodeOrdered(raw)
	if err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	var buf bytes.Buffer
	encodeOrdered(&buf, v)
	return buf.String()
}

// Answers that are not errors but cannot be used say so, without being
// mistaken for connection failures.
func TestUnusableAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		reply    http.HandlerFunc
		streamed bool
		want     string
	}{
		"no choices":          {replyJSON(200, `{"id":"x","object":"chat.completion","choices":[]}`), false, "no choices"},
		"not JSON":            {replyJSON(200, `<html>proxy login</html>`), false, "model provider at"},
		"stream of no events": {replyJSON(200, `{"choices":[{"index":0,"message":{"content":"hi"}}]}`), true, "without any event"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeProvider(t, tc.reply)
			m := f.model()
			err := askOnce(t, m, tc.streamed)
			mustContain(t, err.Error(), tc.want, f.srv.URL)
			if f.requests() != 1 {
				t.Errorf("%d requests", f.requests())
			}
		})
	}
}

// A connection cut in the middle of a stream is a connection error, and is
// not retried once text has been delivered.
func TestStreamCutMidway(t *testing.T) {
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("data: " + chunk(`{"content":"half"}`, "") + "\n\n"))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	var texts []string
	_, err := f.model().Stream(context.Background(), userRequest("hi"), func(s string) { texts = append(texts, s) })
	if err == nil {
		t.Fatal("no error")
	}
	var ce *ConnectionError
	if !errors.As(err, &ce) || !ce.Midway {
		t.Errorf("err = %T %v", err, err)
	}
	mustContain(t, err.Error(), "broke during the answer")
	if f.requests() != 1 || len(texts) != 1 {
		t.Errorf("%d requests, texts %q (err %v)", f.requests(), texts, err)
	}
}

// An event that is not a chat-completion chunk ends the stream with an
// error that says so and shows the event, whether it comes first or after
// text; it is neither a connection error nor retried.
func TestMalformedStreamEvent(t *testing.T) {
	for name, raw := range map[string]string{
		"first":          "data: {\"choices\": [\n\n",
		"after text":     "data: " + chunk(`{"content":"half "}`, "") + "\n\ndata: <html>oops</html>\n\n",
		"wrong type":     "data: {\"choices\":\"many\"}\n\n",
		"empty data":     "data\n\n",
		"no JSON at all": "data: hello\n\ndata: [DONE]\n\n",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeProvider(t, replyRaw("text/event-stream", raw))
			_, err := f.model().Stream(context.Background(), userRequest("hi"), nil)
			var ce *ConnectionError
			var apiErr *APIError
			if err == nil || errors.As(err, &ce) || errors.As(err, &apiErr) {
				t.Fatalf("err = %T %v", err, err)
			}
			mustContain(t, err.Error(), "not a chat-completion chunk", f.srv.URL)
			if f.requests() != 1 {
				t.Errorf("%d requests", f.requests())
			}
		})
	}
}

// The event-stream format's details: CRLF line endings, comments, event
// names and ids, data split over lines, a data field without a space, and
// nothing read after [DONE].
func TestStreamEventFormat(t *testing.T) {
	raw := ": keep-alive\r\nevent: message\r\nid: 7\r\ndata: " + chunk(`{"content":"a"}`, "") + "\r\n\r\n" +
		"data:" + chunk(`{"content":"b"}`, "") + "\n\n" +
		"data: {\"choices\":\ndata: [{\"index\":0,\"delta\":{\"content\":\"c\"},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\ndata: " + chunk(`{"content":"not read"}`, "") + "\n\n"
	f := newFakeProvider(t, replyRaw("text/event-stream", raw))
	var texts []string
	resp, err := f.model().Stream(context.Background(), userRequest("hi"), func(s string) { texts = append(texts, s) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(texts, want) || resp.Message.Content != "abc" || resp.FinishReason != "stop" {
		t.Errorf("deltas %q content %q finish %q", texts, resp.Message.Content, resp.FinishReason)
	}
}

// A body that does not end is read only up to the bound, and the error says
// so; the server then sees the client stop reading. Nothing is retried.
func TestAnswerOverTheBound(t *testing.T) {
	const limit = 4 * maxAnswerBytes // where the fake stops by itself
	for name, tc := range map[string]struct {
		e        *endless
		streamed bool
		want     string
	}{
		"body":         {&endless{head: `{"choices":[{"message":{"content":"`, piece: strings.Repeat("x", 4096), limit: limit}, false, "the answer is over 16 MiB"},
		"stream line":  {&endless{head: "data: ", piece: strings.Repeat("x", 4096), limit: limit}, true, "a line of the stream is over 16 MiB"},
		"stream event": {&endless{head: "", piece: "data: " + strings.Repeat("x", 4096) + "\n", limit: limit}, true, "an event of the stream is over 16 MiB"},
		"stream text":  {&endless{head: "", piece: "data: " + chunk(`{"content":"`+strings.Repeat("x", 4096)+`"}`, "") + "\n\n", limit: limit}, true, "the streamed answer is over 16 MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeProvider(t, tc.e.reply)
			m := f.model()
			err := askOnce(t, m, tc.streamed)
			mustContain(t, err.Error(), tc.want, "OPENAI_BASE_URL", f.srv.URL)
			if f.requests() != 1 {
				t.Errorf("%d requests", f.requests())
			}
			f.srv.Close() // waits for the handler, which ends when the client has gone
			if n := tc.e.total(); n >= limit {
				t.Errorf("the client read all %d bytes the server had to send", n)
			}
		})
	}
}

// A streamed request that meets a rate limit is retried after the wait the
// provider asked for (Retry-After-Ms), and the retry's stream is the answer.
func TestStreamRateLimitThenSuccess(t *testing.T) {
	f := newFakeProvider(t,
		func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After-Ms", "1500")
			replyJSON(429, `{"error":{"message":"Rate limit reached for gpt-4o-mini","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)(w, r)
		},
		replySSE(chunk(`{"content":"ok"}`, "stop")),
	)
	var waits []time.Duration
	m := f.model(WithBackoff(func(attempt int, err *APIError) time.Duration {
		waits = append(waits, err.RetryAfter)
		if err.Code != "rate_limit_exceeded" || err.Type != "requests" {
			t.Errorf("backoff got %+v", err)
		}
		return 0
	}))
	var texts []string
	resp, err := m.Stream(context.Background(), userRequest("hi"), func(s string) { texts = append(texts, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "ok" || f.requests() != 2 || !reflect.DeepEqual(texts, []string{"ok"}) {
		t.Errorf("content %q texts %q after %d requests", resp.Message.Content, texts, f.requests())
	}
	if !reflect.DeepEqual(waits, []time.Duration{1500 * time.Millisecond}) {
		t.Errorf("backoff saw Retry-After %v", waits)
	}
}

// Error bodies in the shapes OpenAI and GLM send, and bodies that are not
// JSON at all, give the provider's code, type and message.
func TestProviderErrorShapes(t *testing.T) {
	for _, tc := range []struct {
		status             int
		contentType, body  string
		code, typ, message string
		retried            bool
	}{
		{401, "application/json", `{"error":{"message":"Incorrect API key provided: sk-abc.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"invalid_api_key", "invalid_request_error", "Incorrect API key provided: sk-abc.", false},
		{400, "application/json", `{"error":{"code":"1211","message":"模型不存在，请检查模型代码。"}}`, "1211", "", "模型不存在，请检查模型代码。", false},
		{429, "application/json", `{"error":{"code":"1113","message":"余额不足或无可用资源包,请充值。"}}`, "1113", "", "余额不足或无可用资源包,请充值。", false},
		{502, "text/html", "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>nginx</body>\r\n</html>", "", "", "<html> <head><title>502 Bad Gateway</title></head> <body>nginx</body> </html>", true},
		{503, "text/plain", "upstream connect error or disconnect/reset before headers", "", "", "upstream connect error or disconnect/reset before headers", true},
	} {
		for _, streamed := range []bool{false, true} {
			f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			m := f.model(WithMaxAttempts(2))
			var err error
			if streamed {
				_, err = m.Stream(context.Background(), userRequest("hi"), nil)
			} else {
				_, err = m.Generate(context.Background(), userRequest("hi"))
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("%d streamed=%v: err = %T %v", tc.status, streamed, err, err)
			}
			if apiErr.Status != tc.status || apiErr.Code != tc.code || apiErr.Type != tc.typ || apiErr.Message != tc.message {
				t.Errorf("%d streamed=%v: %+v", tc.status, streamed, apiErr)
			}
			want := 1
			if tc.retried {
				want = 2
			}
			if f.requests() != want || apiErr.Attempts != want {
				t.Errorf("%d streamed=%v: %d requests, %d attempts, want %d", tc.status, streamed, f.requests(), apiErr.Attempts, want)
			}
		}
	}
}

// Cancelling the context in the middle of a stream ends it with the
// context's error, without a retry.
func TestCancelMidStream(t *testing.T) {
	f := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("data: " + chunk(`{"content":"first"}`, "") + "\n\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var texts []string
	_, err := f.model().Stream(ctx, userRequest("hi"), func(s string) {
		texts = append(texts, s)
		cancel()
	})
	if !errors.Is(err, context.Canceled) || f.requests() != 1 || !reflect.DeepEqual(texts, []string{"first"}) {
		t.Fatalf("err = %v, %d requests, texts %q", err, f.requests(), texts)
	}
}

// A base URL that is not an http or https URL is reported as such, and no
// request is attempted.
func TestBadBaseURL(t *testing.T) {
	for _, base := range []string{"localhost:11434/v1", "ftp://example.com/v1", "http://", "://x"} {
		m := New(Config{APIKey: "k", BaseURL: base}, WithBackoff(noWait))
		_, err := m.Generate(context.Background(), userRequest("hi"))
		var ce *ConnectionError
		if err == nil || errors.As(err, &ce) {
			t.Errorf("%s: err = %T %v", base, err, err)
			continue
		}
		mustContain(t, err.Error(), "OPENAI_BASE_URL", strconv.Quote(base), "not an http or https URL")
	}
}

// askOnce asks m about "hi", streamed or not, and returns the error, which
// must be one about the answer (not a connection error).
func askOnce(t *testing.T, m *Model, streamed bool) error {
	t.Helper()
	var err error
	if streamed {
		_, err = m.Stream(context.Background(), userRequest("hi"), nil)
	} else {
		_, err = m.Generate(context.Background(), userRequest("hi"))
	}
	var ce *ConnectionError
	if err == nil || errors.As(err, &ce) {
		t.Fatalf("err = %T %v", err, err)
	}
	return err
}

// TestStreamReportsToolCallDeltas: with Request.OnToolCallDelta, each piece
// of a streamed call's arguments is reported as it arrives, in order with
// the text, carrying the call's index, id and name (sent only with the
// first piece); the pieces of a call join to its arguments; whole calls in
// one chunk get indexes of their own.
func TestStreamReportsToolCallDeltas(t *testing.T) {
	f := newFakeProvider(t, replySSE(
		chunk(`{"role":"assistant","content":"Looking"}`, ""),
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"show_map","arguments":""}}]}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"Pa"}}]}`, ""),
		chunk(`{"content":" it up"}`, ""),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"ris\"}"}}]}`, ""),
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"show_map","arguments":"{}"}},{"index":1,"id":"call_c","type":"function","function":{"name":"other","arguments":"{\"x\":1}"}}]}`, ""),
		chunk(`{}`, "tool_calls"),
	))
	var log []string
	req := userRequest("map of Paris")
	req.OnToolCallDelta = func(d model.ToolCallDelta) {
		log = append(log, fmt.Sprintf("call %d %s %s %s", d.Index, d.ID, d.Name, d.Arguments))
	}
	resp, err := f.model().Stream(context.Background(), req, func(s string) { log = append(log, "text "+s) })
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"text Looking",
		"call 0 call_a show_map ",
		`call 0 call_a show_map {"city":"Pa`,
		"text  it up",
		`call 0 call_a show_map ris"}`,
		"call 1 call_b show_map {}",
		`call 2 call_c other {"x":1}`,
	}
	if !reflect.DeepEqual(log, want) {
		t.Errorf("reported\n%s\nwant\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if len(resp.Message.ToolCalls) != 3 || string(resp.Message.ToolCalls[0].Arguments) != `{"city":"Paris"}` {
		t.Errorf("calls = %s", jsonOf(resp.Message.ToolCalls))
	}
	// Without the callback the stream is read as before.
	f2 := newFakeProvider(t, replySSE(chunk(`{"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"n","arguments":"{}"}}]}`, "tool_calls")))
	if resp, err := f2.model().Stream(context.Background(), userRequest("x"), nil); err != nil || len(resp.Message.ToolCalls) != 1 {
		t.Errorf("without OnToolCallDelta: %v %v", resp, err)
	}
}
