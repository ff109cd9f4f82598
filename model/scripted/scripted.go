// Package scripted provides a model that replays a fixed list of turns. It is
// for tests of the engine and of code built on it: the run is deterministic
// and the requests the engine made can be inspected afterwards.
package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentapp/agentapp/model"
)

// Turn is one scripted reply.
type Turn struct {
	// Text is the assistant's text.
	Text string
	// Calls are the tool calls of the turn.
	Calls []model.ToolCall
	// Err, when set, is returned instead of a reply.
	Err error
	// Piece is the size in bytes of the pieces in which Stream hands the
	// calls' arguments to Request.OnToolCallDelta; 0 means each call's
	// arguments in one piece. A piece never splits a UTF-8 character.
	Piece int
	// PieceDelay is how long Stream waits before each piece after the
	// first (a model that writes slowly); cancelling the context ends
	// the wait and the call.
	PieceDelay time.Duration
}

// Call builds a tool call with arguments marshalled from args (a string or
// json.RawMessage is used as is).
func Call(id, name string, args any) model.ToolCall {
	var raw json.RawMessage
	switch a := args.(type) {
	case nil:
	case string:
		raw = json.RawMessage(a)
	case json.RawMessage:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			panic(fmt.Sprintf("scripted.Call: %v", err))
		}
		raw = b
	}
	return model.ToolCall{ID: id, Name: name, Arguments: raw}
}

// Model replays turns in order. It is safe for concurrent use.
type Model struct {
	mu       sync.Mutex
	turns    []Turn
	next     int
	requests []*model.Request
	// Loop makes the model start over when it runs out of turns, instead of
	// returning an error. Benchmarks use it.
	Loop bool
	// Record keeps a copy of every request; on by default in New.
	Record bool
}

// New returns a model that replays turns and records requests.
func New(turns ...Turn) *Model {
	return &Model{turns: turns, Record: true}
}

// Name implements model.Model.
func (m *Model) Name() string { return "scripted" }

// Generate implements model.Model.
func (m *Model) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

// Stream implements model.Model. The text of a turn is delivered as one delta.
func (m *Model) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	if m.Record {
		cp := *req
		cp.Messages = append([]model.Message(nil), req.Messages...)
		m.requests = append(m.requests, &cp)
	}
	if m.next >= len(m.turns) {
		if !m.Loop || len(m.turns) == 0 {
			n := len(m.turns)
			m.mu.Unlock()
			return nil, fmt.Errorf("scripted model: no turn left (script has %d turns)", n)
		}
		m.next = 0
	}
	t := m.turns[m.next]
	m.next++
	m.mu.Unlock()
	if t.Err != nil {
		return nil, t.Err
	}
	if onText != nil && t.Text != "" {
		onText(t.Text)
	}
	if req.OnToolCallDelta != nil {
		if err := streamCalls(ctx, &t, req.OnToolCallDelta); err != nil {
			return nil, err
		}
	}
	return &model.Response{Message: model.Message{
		Role:      model.RoleAssistant,
		Content:   t.Text,
		ToolCalls: t.Calls,
	}}, nil
}

// Requests returns the requests the model received, in order.
func (m *Model) Requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request(nil), m.requests...)
}

// Remaining returns how many turns have not been replayed.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.turns) - m.next
}

// streamCalls hands the arguments of t's calls to on in pieces, as a
// provider streaming them would: each call's first piece carries its id
// and name.
func streamCalls(ctx context.Context, t *Turn, on func(model.ToolCallDelta)) error {
	first := true
	for i, c := range t.Calls {
		args := string(c.Arguments)
		for {
			n := len(args)
			if t.Piece > 0 && n > t.Piece {
				n = t.Piece
				for n > 0 && !utf8.RuneStart(args[n]) {
					n--
				}
				if n == 0 { // a piece smaller than one character
					_, n = utf8.DecodeRuneInString(args)
				}
			}
			if !first && t.PieceDelay > 0 {
				tm := time.NewTimer(t.PieceDelay)
				select {
				case <-ctx.Done():
					tm.Stop()
					return ctx.Err()
				case <-tm.C:
				}
			}
			first = false
			on(model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: args[:n]})
			args = args[n:]
			if args == "" {
				break
			}
		}
	}
	return nil
}
