package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/model"
)

// readEvents reads a text/event-stream body and calls onData with the data
// of each event (its data lines, each followed by "\n"), until an event whose
// data is [DONE], the end of the body, an error of the body, or an error of
// onData, which it returns. As the event-stream format says, a line of its
// own ends an event, lines starting with ":" are comments, and an event
// that the body ends before its blank line is dropped. Event names and ids
// are not used by the chat-completions API and are ignored. The data passed
// to onData is valid only until it returns.
func readEvents(body io.Reader, onData func(data []byte) error) error {
	br := bufio.NewReaderSize(body, 32<<10)
	var data, long []byte
	for {
		line, err := readLine(br, &long)
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(line) == 0 {
			if len(data) == 0 {
				continue
			}
			if bytes.HasPrefix(data, []byte("[DONE]")) {
				return nil
			}
			if err := onData(data); err != nil {
				return err
			}
			data = data[:0]
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if string(name) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if len(data)+len(value)+1 > maxAnswerBytes {
			return errTooLarge("an event of the stream")
		}
		data = append(data, value...)
		data = append(data, '\n')
	}
}

// readLine returns the next line of br without its ending ("\n" or
// "\r\n"). A line that fits br's buffer is returned in place, valid until
// the next read; a longer one is gathered in *long. A line over
// maxAnswerBytes is an error as soon as that much of it has arrived, so that
// a body without line breaks is neither held nor read without end. The last
// line of a body that does not end with a line break comes with io.EOF.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	frag, err := br.ReadSlice('\n')
	line := frag
	if err == bufio.ErrBufferFull {
		*long = append((*long)[:0], frag...)
		for err == bufio.ErrBufferFull {
			frag, err = br.ReadSlice('\n')
			if len(*long)+len(frag) > maxAnswerBytes+2 { // +2: the line's ending
				return nil, errTooLarge("a line of the stream")
			}
			*long = append(*long, frag...)
		}
		line = *long
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, err
}

// decodeChunk decodes the data of one event into c. An event with an error
// member, whatever else it holds, is a *streamError.
func decodeChunk(data []byte, c *chatChunk) error {
	if err := json.Unmarshal(data, c); err != nil {
		var probe struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &probe) != nil || !present(probe.Error) {
			return fmt.Errorf("the stream has an event that is not a chat-completion chunk (%v): %s", err, textsafe.Preview(string(bytes.TrimSpace(data)), 300))
		}
		c.Error = probe.Error
	}
	if present(c.Error) {
		return &streamError{data: bytes.Clone(data)}
	}
	return nil
}

// present reports whether a member was in the JSON and not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

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
	size         int // bytes of text, names and arguments kept
	// onCall, when set, hears each piece of a call's arguments
	// (model.Request.OnToolCallDelta).
	onCall func(model.ToolCallDelta)
}

type partialCall struct {
	index    int // in calls
	id, name string
	args     strings.Builder
}

// add takes one chunk and returns its text delta.
func (a *accumulator) add(c *chatChunk) string {
	if c.Usage != nil {
		a.usage = model.Usage{
			InputTokens:  int(c.Usage.PromptTokens),
			OutputTokens: int(c.Usage.CompletionTokens),
		}
	}
	var delta string
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only one choice is asked for
		}
		if ch.FinishReason != "" {
			a.finishReason = string(ch.FinishReason)
		}
		delta += string(ch.Delta.Content)
		for j := range ch.Delta.ToolCalls {
			a.addToolCall(&ch.Delta.ToolCalls[j])
		}
	}
	a.text.WriteString(delta)
	a.size += len(delta)
	return delta
}

func (a *accumulator) addToolCall(tc *wireToolCall) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*partialCall{}
	}
	var cur *partialCall
	if tc.Index != nil {
		cur = a.byIndex[*tc.Index]
	} else if n := len(a.calls); n > 0 {
		cur = a.calls[n-1]
	}
	id := string(tc.ID)
	if cur == nil || (id != "" && cur.id != "" && id != cur.id) {
		cur = &partialCall{index: len(a.calls)}
		a.calls = append(a.calls, cur)
		if tc.Index != nil {
			a.byIndex[*tc.Index] = cur
		}
	}
	if cur.id == "" {
		cur.id = id
	}
	switch name := string(tc.Function.Name); {
	case name == "" || name == cur.name:
	case cur.name == "":
		cur.name = name
		a.size += len(name)
	default:
		cur.name += name // a name sent in pieces
		a.size += len(name)
	}
	cur.args.WriteString(string(tc.Function.Arguments))
	a.size += len(tc.Function.Arguments) + len(id)
	if a.onCall != nil && (len(tc.Function.Arguments) > 0 || tc.Function.Name != "") {
		a.onCall(model.ToolCallDelta{Index: cur.index, ID: cur.id, Name: cur.name, Arguments: string(tc.Function.Arguments)})
	}
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
