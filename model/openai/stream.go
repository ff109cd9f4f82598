package openai

import (
	"strings"

	oai "github.com/openai/openai-go/v3"

	"github.com/agentapp/agentapp/model"
)

// accumulator assembles a streamed answer (choice 0). Tool calls arrive
//
//   - OpenAI style: the first delta of a call has its index, id and name, the
//     following ones only the index and a piece of the arguments;
//   - GLM style: each call whole (id, name, all arguments) in one delta,
//     sometimes several calls in one chunk, sometimes without an index.
//
// A delta joins the call open at its index, unless it carries a new id, which
// starts a new call; a delta without an index joins the last call unless it
// carries a new id.
type accumulator struct {
	text         strings.Builder
	calls        []*partialCall
	byIndex      map[int64]*partialCall
	finishReason string
	usage        model.Usage
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// add takes one chunk and returns its text delta.
func (a *accumulator) add(chunk oai.ChatCompletionChunk) string {
	if chunk.JSON.Usage.Valid() {
		a.usage = model.Usage{
			InputTokens:  int(chunk.Usage.PromptTokens),
			OutputTokens: int(chunk.Usage.CompletionTokens),
		}
	}
	var delta string
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		if ch.FinishReason != "" {
			a.finishReason = ch.FinishReason
		}
		delta += ch.Delta.Content
		for _, tc := range ch.Delta.ToolCalls {
			a.addToolCall(tc)
		}
	}
	a.text.WriteString(delta)
	return delta
}

func (a *accumulator) addToolCall(tc oai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*partialCall{}
	}
	var cur *partialCall
	if tc.JSON.Index.Valid() {
		cur = a.byIndex[tc.Index]
	} else if n := len(a.calls); n > 0 {
		cur = a.calls[n-1]
	}
	if cur == nil || (tc.ID != "" && cur.id != "" && tc.ID != cur.id) {
		cur = &partialCall{}
		a.calls = append(a.calls, cur)
		if tc.JSON.Index.Valid() {
			a.byIndex[tc.Index] = cur
		}
	}
	if cur.id == "" {
		cur.id = tc.ID
	}
	switch name := tc.Function.Name; {
	case name == "" || name == cur.name:
	case cur.name == "":
		cur.name = name
	default:
		cur.name += name // a name sent in pieces
	}
	cur.args.WriteString(tc.Function.Arguments)
}

// response returns the assembled answer.
func (a *accumulator) response() *model.Response {
	out := &model.Response{
		Message:      model.Message{Role: model.RoleAssistant, Content: a.text.String()},
		FinishReason: a.finishReason,
		Usage:        a.usage,
	}
	for _, c := range a.calls {
		if c.name == "" && c.args.Len() == 0 {
			continue
		}
		id := c.id
		if id == "" {
			id = newCallID()
		}
		out.Message.ToolCalls = append(out.Message.ToolCalls, model.ToolCall{
			ID: id, Name: c.name, Arguments: toolArguments(c.args.String()),
		})
	}
	return out
}
