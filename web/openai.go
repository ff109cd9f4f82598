package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
)

// maxCompletionMessages bounds the messages of one OpenAI request; the
// host plans them against the model's context window, folding the older
// ones into a summary when they do not fit.
const maxCompletionMessages = 500

// The OpenAI wire format, as much of it as the endpoint reads and writes.
type (
	oaRequest struct {
		Model    string      `json:"model"`
		Messages []oaMessage `json:"messages"`
		Stream   bool        `json:"stream"`
		// StreamOptions.IncludeUsage asks for a last chunk with the
		// usage and no choices, as OpenAI sends it.
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	oaMessage struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	oaOut struct {
		Role    string `json:"role,omitempty"`
		Content string `json:"content,omitempty"`
	}
	oaChoice struct {
		Index        int     `json:"index"`
		Message      *oaOut  `json:"message,omitempty"`
		Delta        *oaOut  `json:"delta,omitempty"`
		FinishReason *string `json:"finish_reason"`
	}
	oaCompletion struct {
		ID      string     `json:"id"`
		Object  string     `json:"object"`
		Created int64      `json:"created"`
		Model   string     `json:"model"`
		Choices []oaChoice `json:"choices"`
		Usage   *oaUsage   `json:"usage,omitempty"`
	}
	oaUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
		// Estimated marks counts the host estimated because the
		// provider reported none (an extension; OpenAI's clients ignore
		// it).
		Estimated bool `json:"estimated,omitempty"`
	}
	oaError struct {
		Error oaErrorBody `json:"error"`
	}
	oaErrorBody struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
	}
)

// writeOAError answers in the OpenAI error shape, which the SDKs turn
// into their error types.
func writeOAError(w http.ResponseWriter, code int, msg string) {
	typ := "invalid_request_error"
	switch {
	case code == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case code >= 500:
		typ = "server_error"
	}
	writeJSON(w, code, oaError{Error: oaErrorBody{Message: msg, Type: typ}})
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": s.opts.ModelID, "object": "model", "created": 0, "owned_by": "agentapp",
		}},
	})
}

// text reads a message's content: a string, or an array of parts of which
// the text parts are joined (images and audio are not supported).
func (m oaMessage) text() (string, error) {
	if len(m.Content) == 0 || string(m.Content) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", fmt.Errorf("a %s message's content is neither a string nor an array of parts", m.Role)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type != "text" {
			return "", fmt.Errorf("content parts of type %q are not supported; send text", p.Type)
		}
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// conversation turns the request's messages into the loop's: user and
// assistant text, starting at a user message and ending with one. System messages are dropped (the agent has
// its own instructions, and a caller's could undo its guard rails), and so
// are tool messages and tool calls, which belong to the caller's tools,
// not the agent's.
func conversation(in []oaMessage) ([]model.Message, int, string) {
	if len(in) == 0 {
		return nil, http.StatusBadRequest, "messages is empty; send at least one user message"
	}
	if len(in) > maxCompletionMessages {
		return nil, http.StatusBadRequest, fmt.Sprintf("%d messages is over the limit of %d; send the recent part of the conversation", len(in), maxCompletionMessages)
	}
	var msgs []model.Message
	for _, m := range in {
		var role model.Role
		switch m.Role {
		case "user":
			role = model.RoleUser
		case "assistant":
			role = model.RoleAssistant
		case "system", "developer", "tool", "function":
			continue
		default:
			return nil, http.StatusBadRequest, fmt.Sprintf("unknown message role %q", m.Role)
		}
		text, err := m.text()
		if err != nil {
			return nil, http.StatusBadRequest, err.Error()
		}
		if role == model.RoleAssistant && text == "" {
			continue
		}
		msgs = append(msgs, model.Message{Role: role, Content: text})
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != model.RoleUser || strings.TrimSpace(msgs[len(msgs)-1].Content) == "" {
		return nil, http.StatusBadRequest, "the last message must be a user message with text"
	}
	for len(msgs) > 1 && msgs[0].Role != model.RoleUser {
		msgs = msgs[1:]
	}
	return msgs, 0, ""
}

// scanSupplied runs the input guard over every message of the request,
// not only the last: the history is the caller's too, and an injection in
// an earlier user message or a made-up assistant or tool message would
// reach the model (or, dropped, tells what the caller is up to). The last
// user message keeps the chat API's 422; any other message is a 400 that
// names its index, so the caller knows which one to remove.
func (s *Server) scanSupplied(in []oaMessage) (int, string) {
	last := -1
	for i, m := range in {
		if m.Role == "user" {
			last = i
		}
	}
	for i, m := range in {
		text, err := m.text()
		if err != nil { // a dropped role's odd content: scan it as sent
			text = string(m.Content)
		}
		if i == last {
			continue // the host checks the last user message, as every front end's
		}
		source := fmt.Sprintf("messages[%d] (%s)", i, m.Role)
		if err := s.guards.CheckSuppliedMessage(source, "a supplied "+m.Role+" message", text); err != nil {
			return http.StatusBadRequest, err.Error() + "; nothing was sent to the model. Remove or rephrase that message and send the request again"
		}
	}
	return 0, ""
}

// completions is POST /v1/chat/completions: the whole agent as a model.
// The tools run inside; the caller sees only the answer, never a tool
// call. Nothing is stored: the conversation is the request's.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeOAError) {
		return
	}
	var in oaRequest
	if !readJSON(w, r, maxCompletionBody, &in, writeOAError) {
		return
	}
	if in.Model != "" && in.Model != s.opts.ModelID {
		writeJSON(w, http.StatusNotFound, oaError{Error: oaErrorBody{
			Message: fmt.Sprintf("the model %q does not exist; this server offers %q (GET /v1/models)", in.Model, s.opts.ModelID),
			Type:    "invalid_request_error", Code: "model_not_found"}})
		return
	}
	msgs, code, problem := conversation(in.Messages)
	if code != 0 {
		writeOAError(w, code, problem)
		return
	}
	if code, problem := s.scanSupplied(in.Messages); code != 0 {
		writeOAError(w, code, problem)
		return
	}
	if !s.startTurn(w, writeOAError) {
		return
	}
	defer s.releaseStream()

	id := randomID("chatcmpl-")
	created := s.clock.Now().Unix()
	// A session of its own, so per-conversation tool state (createTicket's
	// retry window) does not leak between callers.
	t := &turn{s: s, session: randomID("oa-"), client: clientAddr(r), api: "openai"}
	received := time.Now()
	var once sync.Once
	firstText := func() {
		once.Do(func() { s.metrics.firstEvent.WithLabelValues("openai").Observe(time.Since(received).Seconds()) })
	}
	if !in.Stream {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		_ = rc.SetWriteDeadline(time.Now().Add(s.h.TurnTimeout() + s.opts.WriteTimeout))
		res, err := s.runTurn(r.Context(), t, host.Turn{Conversation: msgs, Summaries: s.summaries}, nil)
		if code, msg, ok := refusal(err); ok {
			writeOAError(w, code, msg)
			return
		}
		if ce := (*host.ContextError)(nil); errors.As(err, &ce) {
			writeJSON(w, http.StatusBadRequest, oaError{Error: oaErrorBody{Message: err.Error(), Type: "invalid_request_error", Code: "context_length_exceeded"}})
			return
		}
		if err != nil {
			writeOAError(w, http.StatusBadGateway, err.Error())
			return
		}
		firstText()
		stop := "stop"
		writeJSON(w, http.StatusOK, oaCompletion{ID: id, Object: "chat.completion", Created: created, Model: s.opts.ModelID,
			Choices: []oaChoice{{Message: &oaOut{Role: "assistant", Content: res.Answer}, FinishReason: &stop}},
			Usage:   usageOf(res.Usage)})
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ev := s.newStream(w, cancel)
	defer ev.close()
	chunk := func(delta *oaOut, finish *string) bool {
		return ev.data(oaCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.opts.ModelID,
			Choices: []oaChoice{{Delta: delta, FinishReason: finish}}})
	}
	// The stream starts once the host has accepted the last message.
	t.accepted = func() { chunk(&oaOut{Role: "assistant"}, nil) }
	streamed := false
	res, err := s.runTurn(ctx, t, host.Turn{Conversation: msgs, Summaries: s.summaries}, func(delta string) {
		firstText()
		streamed = true
		chunk(&oaOut{Content: delta}, nil)
	})
	if code, msg, ok := refusal(err); ok && !ev.started() {
		writeOAError(w, code, msg)
		return
	}
	if err != nil {
		ev.data(oaError{Error: oaErrorBody{Message: err.Error(), Type: "server_error"}})
		return
	}
	if !streamed && res.Answer != "" {
		chunk(&oaOut{Content: res.Answer}, nil)
	}
	stop := "stop"
	chunk(&oaOut{}, &stop)
	if in.StreamOptions != nil && in.StreamOptions.IncludeUsage {
		ev.data(oaCompletion{ID: id, Object: "chat.completion.chunk", Created: created, Model: s.opts.ModelID,
			Choices: []oaChoice{}, Usage: usageOf(res.Usage)})
	}
	ev.raw("[DONE]")
}

// data writes an unnamed event with v as JSON, the OpenAI stream's framing.
func (e *eventStream) data(v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return e.raw(string(b))
}

func (e *eventStream) raw(data string) bool { return e.write("", []byte(data)) }

// usageOf is the turn's usage in the OpenAI shape: every model call of the
// turn added up, estimated (and marked so) where the provider reported
// none.
func usageOf(u host.Usage) *oaUsage {
	return &oaUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens, Estimated: u.Estimated}
}
