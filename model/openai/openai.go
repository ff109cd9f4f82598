// Package openai is the model provider for OpenAI-compatible chat-completion
// endpoints. The default endpoint is Zhipu GLM's
// (https://open.bigmodel.cn/api/paas/v4, model glm-4-flash); the same
// provider serves OpenAI, DeepSeek, Ollama, vLLM and llama.cpp servers by
// changing OPENAI_BASE_URL and OPENAI_MODEL.
//
// It is a client of its own for the one call it needs (POST
// …/chat/completions, streamed or not), on net/http and encoding/json. The
// official SDK is not used because its package initialisation registers the
// types of the whole OpenAI API, and every agentapp binary, the MCP server
// that never calls a model included, would carry them and run that
// initialisation at start-up.
//
// What it does beyond sending the request:
//   - errors that show the provider's own message and code, with a hint of
//     what to check ([APIError]);
//   - its own retry rule: 429 and 5xx are retried with backoff, except GLM's
//     429 with business code 1112/1113 (account locked, balance exhausted),
//     which no retry can fix;
//   - no request timeout: it would cut long streams. Callers bound a whole
//     turn with a context deadline instead;
//   - an answer is read up to a bound, so that a server that sends without
//     end cannot exhaust memory;
//   - tool schemas passed through [Sanitize] when the request is built;
//   - streamed tool calls assembled whether they arrive in pieces across
//     chunks (OpenAI) or whole in one chunk (GLM);
//   - an assistant message that only calls tools is sent without a content
//     field: GLM rejects an empty string there.
package openai

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentapp/agentapp/internal/ctxtime"
	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
)

// DefaultMaxAttempts is how many requests one call makes at most when the
// provider answers 429 or 5xx.
const DefaultMaxAttempts = 3

// maxAnswerBytes bounds what is read of one answer: the body of a
// non-streamed answer, one event of a stream, and the text and tool-call
// arguments a stream assembles. It is far above what a model writes in one
// turn, and it keeps a server that sends without end (a misconfigured base
// URL, a proxy) from exhausting memory.
const maxAnswerBytes = 16 << 20

// responseHeaderTimeout bounds the wait for the response headers with the
// default HTTP client, so that a server that accepts the connection and
// never answers does not hold a turn forever. It does not apply to the body:
// a long stream is not cut.
const responseHeaderTimeout = 10 * time.Minute

// userAgent names this client to the provider.
const userAgent = "agentapp"

// Model is an OpenAI-compatible chat model. It is safe for concurrent use.
type Model struct {
	cfg         Config
	endpoint    string // the chat-completions URL under cfg.BaseURL
	endpointErr error  // why cfg.BaseURL has no such URL
	maxAttempts int
	backoff     Backoff
	httpClient  *http.Client
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

// New returns a model for cfg. An empty BaseURL or Model means the default.
// A base URL that is not an http or https URL is reported by the first
// request.
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
	if m.httpClient == nil {
		m.httpClient = defaultHTTPClient()
	}
	m.endpoint, m.endpointErr = chatURL(cfg.BaseURL)
	return m
}

// defaultHTTPClient is a client whose transport waits at most
// responseHeaderTimeout for the headers. A DefaultTransport that someone
// replaced (to trace requests, say) is used as it is.
func defaultHTTPClient() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = responseHeaderTimeout
	return &http.Client{Transport: t}
}

// chatURL returns the chat-completions endpoint under base, the API root,
// given with or without a trailing slash (…/v1 and …/v1/ are the same).
func chatURL(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("OPENAI_BASE_URL %q is not an http or https URL (it should be the API root that /chat/completions is under, e.g. https://api.openai.com/v1)", base)
	}
	if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	ref, err := u.Parse("chat/completions")
	if err != nil {
		return "", fmt.Errorf("OPENAI_BASE_URL %q: %v", base, err)
	}
	return ref.String(), nil
}

// Name implements model.Model: the provider's model name.
func (m *Model) Name() string { return m.cfg.Model }

// Config returns the model's configuration (with defaults filled in).
func (m *Model) Config() Config { return m.cfg }

// Generate implements model.Model with one non-streamed request.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	body, err := m.requestBody(req, false)
	if err != nil {
		return nil, err
	}
	var out *model.Response
	err = m.do(ctx, func(ctx context.Context) (bool, error) {
		res, err := m.post(ctx, body)
		if err != nil {
			return false, err
		}
		defer res.Body.Close()
		data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes+1))
		if err != nil {
			return false, err
		}
		if len(data) > maxAnswerBytes {
			return false, errTooLarge("the answer")
		}
		out, err = fromCompletion(data)
		return false, err
	})
	return out, err
}

// Stream implements model.Model with a streamed request, calling onText with
// each text delta, and req.OnToolCallDelta, when set, with each piece of a
// tool call. A failure after the first chunk is not retried (the caller has
// already seen text).
func (m *Model) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	body, err := m.requestBody(req, true)
	if err != nil {
		return nil, err
	}
	var out *model.Response
	err = m.do(ctx, func(ctx context.Context) (bool, error) {
		res, err := m.post(ctx, body)
		if err != nil {
			return false, err
		}
		defer res.Body.Close()
		acc := accumulator{onCall: req.OnToolCallDelta}
		started := false
		err = readEvents(res.Body, func(data []byte) error {
			var c chatChunk
			if err := decodeChunk(data, &c); err != nil {
				return err
			}
			started = true
			delta := acc.add(&c)
			if acc.size > maxAnswerBytes {
				return errTooLarge("the streamed answer")
			}
			if delta != "" && onText != nil {
				onText(delta)
			}
			return nil
		})
		if err != nil {
			return started, err
		}
		if !started {
			return false, errors.New("the streamed request was answered without any event (does the server support streaming?)")
		}
		out = acc.response()
		return true, nil
	})
	return out, err
}

// errTooLarge is the error for what was over maxAnswerBytes.
func errTooLarge(what string) error {
	return fmt.Errorf("%s is over %d MiB, so it was not read further (is OPENAI_BASE_URL the API root of a chat-completions server?)", what, maxAnswerBytes>>20)
}

// post sends one request. An answer with an error status is returned as an
// *httpFailure holding the start of its body, and its body is closed.
func (m *Model) post(ctx context.Context, body []byte) (*http.Response, error) {
	if m.endpointErr != nil {
		return nil, m.endpointErr
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if m.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+m.cfg.APIKey)
	}
	if m.cfg.Organization != "" {
		req.Header.Set("OpenAI-Organization", m.cfg.Organization)
	}
	if m.cfg.Project != "" {
		req.Header.Set("OpenAI-Project", m.cfg.Project)
	}
	res, err := m.httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 400 {
		defer res.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		return nil, &httpFailure{status: res.StatusCode, header: res.Header, body: b}
	}
	return res, nil
}

// do runs attempt until it succeeds, fails for good, or runs out of
// attempts. attempt reports whether it had already delivered something (then
// it is not repeated).
func (m *Model) do(ctx context.Context, attempt func(ctx context.Context) (progressed bool, err error)) error {
	for n := 1; ; n++ {
		progressed, err := attempt(ctx)
		if err == nil {
			return nil
		}
		err = m.classify(ctx, err)
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

// The request body of a chat completion, in the fields this package sends.
type (
	chatRequest struct {
		Model     string        `json:"model"`
		Messages  []chatMessage `json:"messages,omitempty"`
		MaxTokens int64         `json:"max_tokens,omitempty"`
		Tools     []chatTool    `json:"tools,omitempty"`
		Stream    bool          `json:"stream,omitempty"`
		// StreamOptions asks a stream for its usage in a last chunk:
		// OpenAI and most compatible servers send none otherwise, and
		// the host would have to estimate every streamed turn.
		StreamOptions *streamOptions `json:"stream_options,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content,omitempty"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID *string        `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string           `json:"id"`
		Type     string           `json:"type"`
		Function chatFunctionCall `json:"function"`
	}
	chatFunctionCall struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// requestBody builds and encodes the request for req once, so that retries
// send the same bytes.
func (m *Model) requestBody(req *model.Request, stream bool) ([]byte, error) {
	r, err := buildRequest(m.cfg.Model, req)
	if err != nil {
		return nil, err
	}
	r.Stream = stream
	if stream {
		r.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the text as the user wrote it, not \u003c for <
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("openai: encode the request: %w", err)
	}
	return buf.Bytes(), nil
}

// buildRequest maps a model request to a chat-completion request.
func buildRequest(modelName string, req *model.Request) (*chatRequest, error) {
	if req == nil {
		return nil, errors.New("openai: nil request")
	}
	// max_tokens, not max_completion_tokens: the compatible providers (GLM
	// among them) read only the older name.
	r := &chatRequest{Model: modelName, MaxTokens: max(req.MaxTokens, 0)}
	if req.System != "" {
		r.Messages = append(r.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		msg := &req.Messages[i]
		switch msg.Role {
		case model.RoleSystem, model.RoleUser:
			r.Messages = append(r.Messages, chatMessage{Role: string(msg.Role), Content: &msg.Content})
		case model.RoleAssistant:
			r.Messages = append(r.Messages, assistantMessage(msg))
		case model.RoleTool:
			r.Messages = append(r.Messages, chatMessage{Role: "tool", Content: &msg.Content, ToolCallID: &msg.ToolCallID})
		default:
			return nil, fmt.Errorf("openai: message %d has unknown role %q", i, msg.Role)
		}
	}
	for _, t := range req.Tools {
		r.Tools = append(r.Tools, chatTool{Type: "function", Function: chatFunction{
			Name: t.Name, Description: t.Description, Parameters: Sanitize(t.Parameters),
		}})
	}
	return r, nil
}

// assistantMessage maps an assistant message. One that only calls tools has
// no content field at all: GLM rejects "" (and some servers null).
func assistantMessage(msg *model.Message) chatMessage {
	out := chatMessage{Role: "assistant"}
	if msg.Content != "" || len(msg.ToolCalls) == 0 {
		out.Content = &msg.Content
	}
	for _, c := range msg.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, chatToolCall{
			ID: c.ID, Type: "function",
			Function: chatFunctionCall{Name: c.Name, Arguments: argumentsText(c.Arguments)},
		})
	}
	return out
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

// The fields of an answer that this package reads, streamed or not.
type (
	chatCompletion struct {
		Choices []struct {
			Message struct {
				Content   text           `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"message"`
			FinishReason text `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
	}
	chatChunk struct {
		Choices []struct {
			Index int64 `json:"index"`
			Delta struct {
				Content   text           `json:"content"`
				ToolCalls []wireToolCall `json:"tool_calls"`
			} `json:"delta"`
			FinishReason text `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage      `json:"usage"`
		Error json.RawMessage `json:"error"`
	}
	wireToolCall struct {
		Index    *int64 `json:"index"` // in stream deltas; nil when absent
		ID       text   `json:"id"`
		Type     text   `json:"type"`
		Function struct {
			Name      text `json:"name"`
			Arguments text `json:"arguments"`
		} `json:"function"`
	}
	wireUsage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	}
)

// text is a string field of an answer. It takes null as "" and, where a
// provider sends another JSON value (arguments as an object, say), the
// value's JSON text, so that one field of an unexpected type does not lose
// the whole answer.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	if s, ok := jsonscan.String(b); ok {
		*t = text(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	*t = text(b)
	return nil
}

// fromCompletion maps a non-streamed answer.
func fromCompletion(data []byte) (*model.Response, error) {
	var cc chatCompletion
	if err := json.Unmarshal(data, &cc); err != nil {
		return nil, fmt.Errorf("the answer is not a chat completion (%v): %s", err, textsafe.Preview(string(bytes.TrimSpace(data)), 300))
	}
	if len(cc.Choices) == 0 {
		return nil, errors.New("the answer has no choices")
	}
	ch := &cc.Choices[0]
	out := &model.Response{
		Message:      model.Message{Role: model.RoleAssistant, Content: string(ch.Message.Content)},
		FinishReason: string(ch.FinishReason),
	}
	if cc.Usage != nil {
		out.Usage = model.Usage{InputTokens: int(cc.Usage.PromptTokens), OutputTokens: int(cc.Usage.CompletionTokens)}
	}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue
		}
		id := string(tc.ID)
		if id == "" {
			id = newCallID()
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{
			ID: id, Name: string(tc.Function.Name), Arguments: toolArguments(string(tc.Function.Arguments)),
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
