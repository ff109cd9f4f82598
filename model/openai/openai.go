// Package openai is the model provider for OpenAI-compatible chat-completion
// endpoints, built on the official SDK (github.com/openai/openai-go/v3). The
// default endpoint is Zhipu GLM's (https://open.bigmodel.cn/api/paas/v4,
// model glm-4-flash); the same provider serves OpenAI, DeepSeek, Ollama, vLLM
// and llama.cpp servers by changing OPENAI_BASE_URL and OPENAI_MODEL.
//
// What it adds to the SDK:
//   - errors that show the provider's own message and code, with a hint of
//     what to check ([APIError]); the SDK's Error() shows only the status;
//   - its own retry rule: 429 and 5xx are retried with backoff, except GLM's
//     429 with business code 1112/1113 (account locked, balance exhausted),
//     which no retry can fix; the SDK's retries are off;
//   - no request timeout: it would cut long streams. Callers bound a whole
//     turn with a context deadline instead;
//   - tool schemas passed through [Sanitize] when the request is built;
//   - streamed tool calls assembled whether they arrive in pieces across
//     chunks (OpenAI) or whole in one chunk (GLM);
//   - an assistant message that only calls tools is sent without a content
//     field: GLM rejects an empty string there.
package openai

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentapp/agentapp/internal/ctxtime"
	"github.com/agentapp/agentapp/model"
)

// DefaultMaxAttempts is how many requests one call makes at most when the
// provider answers 429 or 5xx.
const DefaultMaxAttempts = 3

// Model is an OpenAI-compatible chat model. It is safe for concurrent use.
type Model struct {
	cfg         Config
	client      oai.Client
	maxAttempts int
	backoff     Backoff
	httpClient  *http.Client
	extra       []option.RequestOption
}

var _ model.Model = (*Model)(nil)

// Option configures a Model.
type Option func(*Model)

// WithHTTPClient sets the HTTP client (its Timeout, if any, also cuts
// streams: prefer a context deadline).
func WithHTTPClient(c *http.Client) Option { return func(m *Model) { m.httpClient = c } }

// WithMaxAttempts sets how many requests one call makes at most (at least 1).
func WithMaxAttempts(n int) Option {
	return func(m *Model) { m.maxAttempts = max(n, 1) }
}

// WithBackoff replaces DefaultBackoff; tests pass one that does not wait.
func WithBackoff(b Backoff) Option { return func(m *Model) { m.backoff = b } }

// WithRequestOptions adds SDK request options (extra headers, say) to every
// request. Options that change retries or timeouts defeat this package's
// rules.
func WithRequestOptions(opts ...option.RequestOption) Option {
	return func(m *Model) { m.extra = append(m.extra, opts...) }
}

// New returns a model for cfg. An empty BaseURL or Model means the default.
func New(cfg Config, opts ...Option) *Model {
	cfg.BaseURL = or(strings.TrimSpace(cfg.BaseURL), DefaultBaseURL)
	cfg.Model = or(strings.TrimSpace(cfg.Model), DefaultModel)
	m := &Model{cfg: cfg, maxAttempts: DefaultMaxAttempts, backoff: DefaultBackoff}
	for _, o := range opts {
		o(m)
	}
	if m.backoff == nil {
		m.backoff = DefaultBackoff
	}
	reqOpts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(0), // our own loop decides (see do)
		option.WithMiddleware(captureErrors),
	}
	if m.httpClient != nil {
		reqOpts = append(reqOpts, option.WithHTTPClient(m.httpClient))
	}
	reqOpts = append(reqOpts, m.extra...)
	m.client = oai.NewClient(reqOpts...)
	return m
}

// Name implements model.Model: the provider's model name.
func (m *Model) Name() string { return m.cfg.Model }

// Config returns the model's configuration (with defaults filled in).
func (m *Model) Config() Config { return m.cfg }

// Generate implements model.Model with one non-streamed request.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	params, err := buildParams(m.cfg.Model, req)
	if err != nil {
		return nil, err
	}
	var out *model.Response
	err = m.do(ctx, func(ctx context.Context) (bool, error) {
		cc, err := m.client.Chat.Completions.New(ctx, params)
		if err != nil {
			return false, err
		}
		out, err = fromCompletion(cc)
		return false, err
	})
	return out, err
}

// Stream implements model.Model with a streamed request, calling onText with
// each text delta. A failure after the first chunk is not retried (the
// caller has already seen text).
func (m *Model) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	params, err := buildParams(m.cfg.Model, req)
	if err != nil {
		return nil, err
	}
	var out *model.Response
	err = m.do(ctx, func(ctx context.Context) (bool, error) {
		stream := m.client.Chat.Completions.NewStreaming(ctx, params)
		defer stream.Close()
		var acc accumulator
		started := false
		for stream.Next() {
			started = true
			if delta := acc.add(stream.Current()); delta != "" && onText != nil {
				onText(delta)
			}
		}
		if err := stream.Err(); err != nil {
			return started, err
		}
		if !started {
			return false, errors.New("the streamed request was answered without any event (does the server support streaming?)")
		}
		out = acc.response()
		return started, nil
	})
	return out, err
}

// do runs attempt until it succeeds, fails for good, or runs out of
// attempts. attempt reports whether it had already delivered something (then
// it is not repeated).
func (m *Model) do(ctx context.Context, attempt func(ctx context.Context) (progressed bool, err error)) error {
	for n := 1; ; n++ {
		var failure *httpFailure
		actx := context.WithValue(ctx, captureKey{}, &failure)
		progressed, err := attempt(actx)
		if err == nil {
			return nil
		}
		err = m.classify(ctx, err, failure)
		var connErr *ConnectionError
		if errors.As(err, &connErr) {
			connErr.Midway = progressed
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			return err
		}
		apiErr.Attempts = n
		if progressed || !apiErr.Retryable() || n >= m.maxAttempts {
			return apiErr
		}
		if err := ctxtime.Sleep(ctx, m.backoff(n, apiErr)); err != nil {
			return err
		}
	}
}

// buildParams maps a model request to chat-completion parameters.
func buildParams(modelName string, req *model.Request) (oai.ChatCompletionNewParams, error) {
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(modelName)}
	if req == nil {
		return p, errors.New("openai: nil request")
	}
	if req.MaxTokens > 0 {
		// max_tokens, not max_completion_tokens: the compatible providers
		// (GLM among them) read only the older name.
		p.MaxTokens = oai.Int(req.MaxTokens)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, oai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case model.RoleSystem:
			p.Messages = append(p.Messages, oai.SystemMessage(msg.Content))
		case model.RoleUser:
			p.Messages = append(p.Messages, oai.UserMessage(msg.Content))
		case model.RoleAssistant:
			p.Messages = append(p.Messages, assistantParam(msg))
		case model.RoleTool:
			p.Messages = append(p.Messages, oai.ToolMessage(msg.Content, msg.ToolCallID))
		default:
			return p, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = oai.String(t.Description)
		}
		// Raw JSON keeps the schema's key order (Parameters is a map).
		fn.SetExtraFields(map[string]any{"parameters": Sanitize(t.Parameters)})
		p.Tools = append(p.Tools, oai.ChatCompletionToolUnionParam{
			OfFunction: &oai.ChatCompletionFunctionToolParam{Function: fn},
		})
	}
	return p, nil
}

// assistantParam maps an assistant message. One that only calls tools has
// no content field at all: GLM rejects "" (and some servers null).
func assistantParam(msg model.Message) oai.ChatCompletionMessageParamUnion {
	var a oai.ChatCompletionAssistantMessageParam
	if msg.Content != "" || len(msg.ToolCalls) == 0 {
		a.Content.OfString = oai.String(msg.Content)
	}
	for _, c := range msg.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
				ID: c.ID,
				Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      c.Name,
					Arguments: argumentsText(c.Arguments),
				},
			},
		})
	}
	return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// argumentsText is the text of a call's arguments as the provider sent it:
// arguments that were not JSON were kept as a JSON string (see
// toolArguments) and are unwrapped again.
func argumentsText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// toolArguments turns the provider's argument text into the call's
// arguments: "{}" when empty, the text itself when it is JSON, otherwise the
// text as a JSON string (schema validation then tells the model what is
// wrong, and the message history stays valid JSON).
func toolArguments(text string) json.RawMessage {
	text = strings.TrimSpace(text)
	if text == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	b, _ := json.Marshal(text)
	return b
}

// fromCompletion maps a non-streamed answer.
func fromCompletion(cc *oai.ChatCompletion) (*model.Response, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, errors.New("the answer has no choices")
	}
	ch := cc.Choices[0]
	out := &model.Response{
		Message:      model.Message{Role: model.RoleAssistant, Content: ch.Message.Content},
		FinishReason: ch.FinishReason,
		Usage: model.Usage{
			InputTokens:  int(cc.Usage.PromptTokens),
			OutputTokens: int(cc.Usage.CompletionTokens),
		},
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := tc.ID
		if id == "" {
			id = newCallID()
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{
			ID: id, Name: tc.Function.Name, Arguments: toolArguments(tc.Function.Arguments),
		})
	}
	return out, nil
}

// newCallID invents an id for a tool call the provider sent without one, so
// that its result can still be linked to it.
func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
