// Package model defines what the engine needs from a language model: a
// request of messages and tool specifications, and a reply that is either
// text or tool calls. Providers live in sub-packages.
package model

import (
	"context"
	"encoding/json"
)

// Role is the author of a message.
type Role string

// The message roles of a chat conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of the message. For a tool message it is the tool's
	// output (or error) as the model sees it.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Name is the tool's name on a tool message.
	Name string `json:"name,omitempty"`
}

// ToolCall is the model's request to run one tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Request is one model call.
type Request struct {
	// System is the system prompt; empty means none.
	System   string
	Messages []Message
	Tools    []ToolSpec
	// MaxTokens bounds the length of the reply; 0 leaves it to the
	// provider. Sampling requests from MCP servers set it, so the cap the
	// user approved is the cap the provider enforces.
	MaxTokens int64
	// OnToolCallDelta, when set, is called by Stream with each piece of
	// a tool call's arguments as the model writes it, so that a front end
	// can show the call before it is whole (an MCP Apps view gets its
	// input while the model streams). Nil means not wanted; a provider that
	// cannot report pieces ignores it. It is called from the goroutine
	// that called Stream, before Stream returns.
	OnToolCallDelta func(ToolCallDelta)
}

// ToolCallDelta is one piece of a streamed tool call.
type ToolCallDelta struct {
	// Index tells the calls of one reply apart, from 0 in the order they
	// began; the pieces of a call share it.
	Index int
	// ID and Name are the call's id and tool name as far as they are
	// known with this piece (a provider may send them with the first
	// piece only; they are repeated here). ID may stay empty for a
	// provider that gives none until the reply is whole.
	ID, Name string
	// Arguments is the new piece of the arguments' JSON text; the pieces
	// of a call, joined in order, are its arguments.
	Arguments string
}

// Response is the model's reply: an assistant message with text, tool calls
// or both.
type Response struct {
	Message Message
	// FinishReason is the provider's reason for stopping, when it gives one.
	FinishReason string
	Usage        Usage
}

// Usage counts tokens when the provider reports them.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
}

// Model is a language model that can call tools.
type Model interface {
	// Name identifies the model for banners and logs, e.g. "glm-4-flash".
	Name() string
	// Generate returns the whole reply at once.
	Generate(ctx context.Context, req *Request) (*Response, error)
	// Stream returns the same reply as Generate, calling onText with each
	// piece of text as it arrives. onText may be nil.
	Stream(ctx context.Context, req *Request, onText func(delta string)) (*Response, error)
}
