package web

import (
	"context"
	"encoding/json"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
)

// HistoryEntry is one message of a session as the page shows it: the
// user's, or the assistant's answer with the tool calls that led to it and
// the sources it cites.
type HistoryEntry struct {
	Role    string        `json:"role"`
	Content string        `json:"content"`
	Steps   []StepEvent   `json:"steps,omitempty"`
	Sources []host.Source `json:"sources,omitempty"`
}

// history reads a session for display: a turn's assistant messages with
// tool calls and the tool results become the steps of its answer. When
// after >= 0, the model's view begins that many messages before the end
// (the rest is folded into the summary), and at is the index of the entry
// the page marks the place before; else at is -1.
func (s *Server) history(ctx context.Context, id string, after int) (_ []HistoryEntry, at int, _ bool, _ error) {
	at = -1
	ok, err := s.sessions.Exists(ctx, id)
	if err != nil || !ok {
		return nil, at, ok, err
	}
	msgs, err := s.sessions.Window(ctx, id, historyLimit)
	if err != nil {
		return nil, at, true, err
	}
	first := -1 // the first message of the model's view, in msgs
	if after >= 0 {
		first = max(0, len(msgs)-after)
	}
	set := s.h.Tools().Current()
	out := []HistoryEntry{}
	var steps []StepEvent
	var outputs []string
	index := map[string]int{} // call id → steps index
	step := 0
	for i, m := range msgs {
		if i == first {
			at = len(out)
		}
		switch m.Role {
		case model.RoleUser:
			out = append(out, HistoryEntry{Role: "user", Content: host.TypedText(m.Content)})
			steps, outputs, index, step = nil, nil, map[string]int{}, 0
		case model.RoleAssistant:
			if len(m.ToolCalls) > 0 {
				step++
				for _, c := range m.ToolCalls {
					index[c.ID] = len(steps)
					server := host.OriginOf(set, c.Name)
					steps = append(steps, StepEvent{ID: c.ID, Step: step, Tool: c.Name, Server: server, Input: jsonOrString(c.Arguments), State: "ok"})
				}
				continue
			}
			out = append(out, HistoryEntry{Role: "assistant", Content: m.Content, Steps: steps, Sources: s.h.Sources(m.Content, outputs)})
			steps, outputs = nil, nil
		case model.RoleTool:
			outputs = append(outputs, m.Content)
			i, ok := index[m.ToolCallID]
			if !ok {
				continue
			}
			if msg, failed := errorOutput(m.Content); failed {
				steps[i].State, steps[i].Error = "error", msg
			} else {
				steps[i].Output = m.Content
				if isDenial(m.Content) {
					steps[i].State = "denied"
				}
			}
		}
	}
	// The views: matched from the newest step back (withStoredUI).
	kept, err := s.appStepsOf(ctx, id)
	if err != nil {
		s.log.Error(err.Error())
		kept = nil // the views come from the running servers alone
	}
	for i := len(out) - 1; i >= 0; i-- {
		for j := len(out[i].Steps) - 1; j >= 0; j-- {
			s.withStoredUI(&out[i].Steps[j], kept)
		}
	}
	if first >= 0 && at < 0 {
		at = len(out) // the whole window is folded: the mark ends it
	}
	return out, at, true, nil
}

// errorOutput recognises the result the loop stores for a failed call
// (agent.ErrorOutput: an object with "error" alone).
func errorOutput(content string) (string, bool) {
	var e map[string]json.RawMessage
	if len(content) == 0 || content[0] != '{' || json.Unmarshal([]byte(content), &e) != nil || len(e) != 1 {
		return "", false
	}
	var msg string
	if raw, ok := e["error"]; ok && json.Unmarshal(raw, &msg) == nil {
		return msg, true
	}
	return "", false
}
