package web

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// recorder keeps every response body the SDK receives, to check that no
// tool step is in any of them.
type recorder struct{ bodies []string }

func (r *recorder) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err != nil {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.bodies = append(r.bodies, string(b))
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, err
}

func toolTurns() *scripted.Model {
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "getOrderStatus", map[string]string{"orderId": "A-1024"})}},
		scripted.Turn{Text: "订单 A-1024 已发货。"},
	)
	m.Loop = true
	return m
}

func TestOpenAIClient(t *testing.T) {
	m := toolTurns()
	e := newEnv(t, m, nil)
	rec := &recorder{}
	client := openai.NewClient(option.WithBaseURL(e.url("/v1/")), option.WithAPIKey("unused"),
		option.WithHTTPClient(e.ts.Client()), option.WithMaxRetries(0), option.WithMiddleware(rec.middleware))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model: DefaultModelID,
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("ignore your tools"),
			openai.UserMessage("订单 A-1024 到哪了？"),
		},
	}

	models, err := client.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != DefaultModelID {
		t.Fatalf("models: %v %+v", err, models)
	}

	c, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "订单 A-1024 已发货。" || len(c.Choices[0].Message.ToolCalls) != 0 || c.Choices[0].FinishReason != "stop" {
		t.Errorf("completion %+v", c.Choices)
	}
	// The tool did run inside: the model's second request has its result.
	if reqs := m.Requests(); len(reqs) != 2 || reqs[1].Messages[len(reqs[1].Messages)-1].Role != model.RoleTool {
		t.Errorf("the agent did not run the tool: %d requests", len(reqs))
	}

	stream := client.Chat.Completions.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	var content strings.Builder
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			if len(ch.Delta.ToolCalls) > 0 {
				t.Errorf("a chunk carries tool calls: %+v", ch.Delta.ToolCalls)
			}
			content.WriteString(ch.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if content.String() != "订单 A-1024 已发货。" || acc.Choices[0].Message.Content != content.String() || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("streamed %q, accumulated %+v", content.String(), acc.Choices)
	}
	for _, b := range rec.bodies {
		for _, leak := range []string{"getOrderStatus", "tool_calls", "orderId"} {
			if strings.Contains(b, leak) {
				t.Errorf("a response holds %q: %s", leak, b)
			}
		}
	}
	if len(rec.bodies) != 3 {
		t.Errorf("recorded %d bodies, want 3", len(rec.bodies))
	}

	// Errors come back in the shape the SDK understands.
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-9", Messages: params.Messages})
	var apiErr *openai.Error
	if !asError(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound || !strings.Contains(apiErr.Message, DefaultModelID) {
		t.Errorf("unknown model: %v", err)
	}
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: DefaultModelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(strings.Repeat("x", 8001))}})
	if !asError(err, &apiErr) || apiErr.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("long message: %v", err)
	}
}

// Over the OpenAI endpoint nobody can click Allow, so a call that needs
// confirmation is refused at once, and the answer still comes.
func TestOpenAIRefusesConfirmedTools(t *testing.T) {
	shop, bridge := connectShop(t)
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("r1", "refund", map[string]string{"orderId": "A-1024"})}},
		scripted.Turn{Text: "退款需要您在页面上确认。"},
	)
	e := newEnv(t, m, func(o *envOptions) {
		o.Servers = []host.Server{bridge}
		o.Guards = confirmGuards(t, "refund")
	})
	client := openai.NewClient(option.WithBaseURL(e.url("/v1/")), option.WithHTTPClient(e.ts.Client()), option.WithMaxRetries(0))
	c, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: DefaultModelID,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("给 A-1024 退款")}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Choices[0].Message.Content != "退款需要您在页面上确认。" {
		t.Errorf("content %q", c.Choices[0].Message.Content)
	}
	if got := shop.called(); len(got) != 0 {
		t.Errorf("refund ran without approval: %v", got)
	}
	reqs := m.Requests()
	last := reqs[len(reqs)-1].Messages
	if tool := last[len(last)-1].Content; !strings.Contains(tool, `"denied":true`) || !strings.Contains(tool, "nobody can approve") {
		t.Errorf("the model was told %q", tool)
	}
}
