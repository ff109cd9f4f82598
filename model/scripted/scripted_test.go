package scripted_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

func TestReplaysTurnsAndRecordsRequests(t *testing.T) {
	boom := errors.New("provider down")
	m := scripted.New(
		scripted.Turn{Text: "first"},
		scripted.Turn{Err: boom},
	)
	ctx := context.Background()
	var streamed strings.Builder
	res, err := m.Stream(ctx, &model.Request{System: "s", Messages: []model.Message{{Role: model.RoleUser, Content: "a"}}}, func(d string) { streamed.WriteString(d) })
	if err != nil || res.Message.Content != "first" || res.Message.Role != model.RoleAssistant || streamed.String() != "first" {
		t.Fatalf("turn 1: %+v, %v, streamed %q", res, err, streamed.String())
	}
	if _, err := m.Generate(ctx, &model.Request{}); !errors.Is(err, boom) {
		t.Fatalf("turn 2: err = %v, want the scripted error", err)
	}
	if _, err := m.Generate(ctx, &model.Request{}); err == nil || !strings.Contains(err.Error(), "no turn left") {
		t.Fatalf("past the script: err = %v", err)
	}
	reqs := m.Requests()
	if len(reqs) != 3 || reqs[0].System != "s" || reqs[0].Messages[0].Content != "a" {
		t.Fatalf("recorded %d requests: %+v", len(reqs), reqs)
	}
	if m.Remaining() != 0 {
		t.Fatalf("remaining = %d", m.Remaining())
	}
}

func TestLoopStartsOver(t *testing.T) {
	m := scripted.New(scripted.Turn{Text: "a"}, scripted.Turn{Text: "b"})
	m.Loop = true
	var got []string
	for range 3 {
		res, err := m.Generate(context.Background(), &model.Request{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Message.Content)
	}
	if strings.Join(got, "") != "aba" {
		t.Fatalf("got %v", got)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := scripted.New(scripted.Turn{Text: "x"}).Generate(ctx, &model.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestCallMarshalsArguments(t *testing.T) {
	c := scripted.Call("id", "tool", map[string]int{"k": 1})
	if string(c.Arguments) != `{"k":1}` || c.Name != "tool" || c.ID != "id" {
		t.Fatalf("%+v", c)
	}
	if c := scripted.Call("id", "tool", `{"raw":true}`); string(c.Arguments) != `{"raw":true}` {
		t.Fatalf("%+v", c)
	}
	if c := scripted.Call("id", "tool", nil); c.Arguments != nil {
		t.Fatalf("%+v", c)
	}
}

// TestStreamsCallsInPieces: with Request.OnToolCallDelta, a turn's calls
// are handed over in pieces of Piece bytes, never splitting a character,
// each with its call's index, id and name, PieceDelay apart; cancelling
// the context during a wait ends the call.
func TestStreamsCallsInPieces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := scripted.New(
			scripted.Turn{Calls: []model.ToolCall{
				scripted.Call("c1", "map", `{"city":"北京"}`),
				scripted.Call("c2", "note", `{}`),
			}, Piece: 5, PieceDelay: 10 * time.Millisecond},
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c3", "map", `{"a":1}`)}, PieceDelay: time.Hour},
			scripted.Turn{Calls: []model.ToolCall{scripted.Call("c4", "map", `{"a":1}`)}, Piece: 2, PieceDelay: time.Hour},
		)
		var got []string
		start := time.Now()
		req := &model.Request{OnToolCallDelta: func(d model.ToolCallDelta) {
			got = append(got, fmt.Sprintf("%v %d %s %s %s", time.Since(start), d.Index, d.ID, d.Name, d.Arguments))
		}}
		res, err := m.Stream(context.Background(), req, nil)
		if err != nil || len(res.Message.ToolCalls) != 2 {
			t.Fatalf("turn 1: %+v, %v", res, err)
		}
		want := []string{
			`0s 0 c1 map {"cit`,
			`10ms 0 c1 map y":"`,
			`20ms 0 c1 map 北`,
			`30ms 0 c1 map 京"}`,
			`40ms 1 c2 note {}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("pieces\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// One piece per call: no wait at all.
		got = nil
		start = time.Now()
		if _, err := m.Stream(context.Background(), req, nil); err != nil || len(got) != 1 || got[0] != `0s 0 c3 map {"a":1}` {
			t.Errorf("turn 2: %q, %v", got, err)
		}
		// Cancelled while waiting for the next piece.
		ctx, cancel := context.WithCancel(context.Background())
		got = nil
		req.OnToolCallDelta = func(model.ToolCallDelta) { got = append(got, "piece"); cancel() }
		if _, err := m.Stream(ctx, req, nil); !errors.Is(err, context.Canceled) || len(got) != 1 {
			t.Errorf("cancelled turn 3: %d pieces, err %v", len(got), err)
		}
	})
}
