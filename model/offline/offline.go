package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentapp/agentapp/internal/fence"
	"github.com/agentapp/agentapp/model"
)

// Model is the offline demo model. It keeps no state: each reply is computed
// from the request alone, so one Model is safe for concurrent use and the
// same request always gets the same reply.
type Model struct{ tools Tools }

// New returns the offline demo model, which calls the tools named by t.
func New(t Tools) *Model { return &Model{tools: t} }

// Name implements model.Model.
func (m *Model) Name() string { return "offline-demo" }

// Generate implements model.Model: it returns a tool call for a new user
// message, or the answer once that call's results are in.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msg := reply(m.tools, req)
	reason := "stop"
	if len(msg.ToolCalls) > 0 {
		reason = "tool_calls"
	}
	return &model.Response{Message: msg, FinishReason: reason}, nil
}

// Stream implements model.Model. The answer is delivered sentence by
// sentence, so a chat shows streaming behaviour without a network; the
// pieces always concatenate to the returned message's content.
func (m *Model) Stream(ctx context.Context, req *model.Request, onText func(delta string)) (*model.Response, error) {
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return nil, err
	}
	if onText != nil {
		for _, c := range chunks(resp.Message.Content) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			onText(c)
		}
	}
	return resp, nil
}

// reply computes the assistant message for a request.
func reply(t Tools, req *model.Request) model.Message {
	if req == nil {
		return say(intro(english))
	}
	msgs := req.Messages
	u := lastUser(msgs)
	if u < 0 {
		return say(intro(english))
	}
	user := typed(msgs[u].Content)
	l := langOf(user)
	if since := msgs[u+1:]; toolsUsed(since) {
		// A search for a tool the message names, which loaded it: call
		// it now, as a model that searched first would.
		if onlySearched(since) {
			if names := namedTools(req.Tools, user); len(names) > 0 && !slices.Contains(names, searchToolName) {
				return callNamed(t, fmt.Sprintf("offline-%d", len(msgs)), names, user, "")
			}
		}
		// The tools for this message have run: answer, never call again.
		// The search that led to a tool is not part of the answer.
		results := collectResults(t, since)
		if found := slices.DeleteFunc(slices.Clone(results), func(r result) bool { return r.name == searchToolName }); len(found) > 0 {
			results = found
		}
		return say(answer(l, user, results))
	}
	return plan(t, req.Tools, msgs, u, l)
}

// plan decides the first move for the user message at msgs[u].
func plan(t Tools, tools []model.ToolSpec, msgs []model.Message, u int, l lang) model.Message {
	user := typed(msgs[u].Content)
	id := fmt.Sprintf("offline-%d", len(msgs))
	in, orderID := classify(user)
	if names := namedTools(tools, user); len(names) > 0 {
		return callNamed(t, id, names, user, orderID)
	}
	// The tool the message asks for is not offered, but the host defers
	// tools behind searchTools: search for it by name; the host loads
	// what the search finds, and the next round calls it.
	if name := askedName(user); name != "" && findTool(tools, searchToolName) == searchToolName {
		return call(id, searchToolName, struct {
			Query string `json:"query"`
		}{name})
	}
	switch in {
	case intentIntro:
		return say(intro(l))
	case intentHuman:
		name := findTool(tools, t.Handoff)
		if name == "" {
			return say(noHandoff(l, t, tools))
		}
		return call(id, name, struct {
			Reason     string `json:"reason"`
			Transcript string `json:"transcript"`
		}{handoffReason(l, user), transcript(msgs[:u+1])})
	case intentTicket:
		name := findTool(tools, t.Ticket)
		if name == "" {
			return say(missingTool(l, t, dutyTicket, tools))
		}
		return call(id, name, struct {
			Subject     string `json:"subject"`
			Description string `json:"description"`
		}{ticketSubject(user), cut(user, maxDescriptionRunes)})
	case intentOrder:
		name := findTool(tools, t.Order)
		if name == "" {
			return say(missingTool(l, t, dutyOrder, tools))
		}
		return call(id, name, struct {
			OrderID string `json:"orderId"`
		}{orderID})
	}
	name := findTool(tools, t.Search, t.SearchRemote)
	if name == "" {
		return say(missingTool(l, t, dutyKB, tools))
	}
	return call(id, name, struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}{searchQuery(user), searchK})
}

// Limits that keep the model's arguments inside the tools' schemas.
const (
	maxSubjectRunes     = 60
	maxDescriptionRunes = 4000
	maxReasonRunes      = 200
	maxTranscriptRunes  = 20000
	maxQueryRunes       = 500
	searchK             = 3
)

// say is a text-only assistant message.
func say(text string) model.Message {
	return model.Message{Role: model.RoleAssistant, Content: text}
}

// call is an assistant message with one tool call. Arguments are encoded
// without HTML escaping so that traces show "<" and "&" as typed.
func call(id, name string, args any) model.Message {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		// The argument structs hold only strings and ints.
		panic(fmt.Sprintf("offline: encoding arguments: %v", err))
	}
	return model.Message{
		Role:      model.RoleAssistant,
		ToolCalls: []model.ToolCall{{ID: id, Name: name, Arguments: bytes.TrimSpace(buf.Bytes())}},
	}
}

// typed is what the customer typed in a user message: fenced data the
// host attached to it (an operator's hand-back note, a view's context)
// is not theirs, so a note that says "转人工" must not hand off again.
func typed(content string) string {
	var b strings.Builder
	for {
		i := strings.Index(content, fence.Open+"\n")
		if i < 0 {
			b.WriteString(content)
			break
		}
		b.WriteString(content[:i])
		j := strings.Index(content[i:], "\n"+fence.Close)
		if j < 0 {
			break // an unclosed fence: the rest is data
		}
		content = content[i+j+len("\n"+fence.Close):]
	}
	return strings.TrimSpace(b.String())
}

// lastUser returns the index of the last user message, or -1.
func lastUser(msgs []model.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return i
		}
	}
	return -1
}

// toolsUsed reports whether the messages after the user's message contain a
// tool call or a tool result.
func toolsUsed(since []model.Message) bool {
	for _, m := range since {
		if m.Role == model.RoleTool || (m.Role == model.RoleAssistant && len(m.ToolCalls) > 0) {
			return true
		}
	}
	return false
}

// result is one tool result for the current user message.
type result struct {
	kind    kind
	name    string
	args    map[string]any
	content string
}

// collectResults pairs each tool message with the call it answers.
func collectResults(t Tools, since []model.Message) []result {
	calls := map[string]model.ToolCall{}
	var out []result
	for _, m := range since {
		switch m.Role {
		case model.RoleAssistant:
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
			}
		case model.RoleTool:
			c := calls[m.ToolCallID]
			name := m.Name
			if name == "" {
				name = c.Name
			}
			var args map[string]any
			_ = json.Unmarshal(c.Arguments, &args) // absent or odd arguments only lose detail
			out = append(out, result{kind: kindOf(t, name), name: name, args: args, content: m.Content})
		}
	}
	return out
}

// transcript renders the conversation's user and assistant text, one message
// per line, for the human who takes over. When it is too long the oldest
// lines go first: the latest messages matter most.
func transcript(msgs []model.Message) string {
	var lines []string
	for _, m := range msgs {
		text := oneLine(m.Content)
		if text == "" {
			continue
		}
		switch m.Role {
		case model.RoleUser:
			lines = append(lines, "user: "+text)
		case model.RoleAssistant:
			lines = append(lines, "assistant: "+text)
		}
	}
	for len(lines) > 1 && runeLen(strings.Join(lines, "\n")) > maxTranscriptRunes {
		lines = lines[1:]
	}
	return cut(strings.Join(lines, "\n"), maxTranscriptRunes)
}

// ticketSubject derives a one-line subject from the user's message: its first
// sentence, or the whole message when that sentence is too short to say
// anything ("投诉！").
func ticketSubject(user string) string {
	text := oneLine(user)
	if s := sentences(text); len(s) > 0 && runeLen(s[0]) >= 6 {
		text = s[0]
	}
	return cut(text, maxSubjectRunes)
}

// handoffReason says why a human is needed, quoting the request.
func handoffReason(l lang, user string) string {
	return l.pick("客户要求转人工客服：", "The customer asked for a human agent: ") + cut(oneLine(user), maxReasonRunes)
}
