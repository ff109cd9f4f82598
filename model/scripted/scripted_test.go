package scripted_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
