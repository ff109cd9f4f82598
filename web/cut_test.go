package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// TestStepShowsCut: a tool result over the cap reaches the page cut, with
// a "cut" field on its step saying how large the whole is and its handle.
func TestStepShowsCut(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, "row %d: 已发货 shipped\n", i)
	}
	big := b.String()
	dump := &agent.Tool{Name: "dump", InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(context.Context, json.RawMessage) (any, error) { return big, nil }}
	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("c1", "dump", map[string]string{})}},
		scripted.Turn{Text: "done"},
	)
	e := newEnv(t, m, func(o *Options) { o.Local = append(o.Local, dump) })
	id := e.newSession(t)
	s := finalStep(t, e.send(t, id, "dump it").rest(t))
	if s.Cut == nil {
		t.Fatalf("the step of a 3 MB result has no cut field: output of %d bytes", len(s.Output))
	}
	if s.Cut.Bytes != len(big) || s.Cut.ID == "" || s.Cut.ShownBytes >= len(big) || !strings.Contains(s.Cut.Notice, s.Cut.ID) {
		t.Errorf("cut %+v", s.Cut)
	}
	if len(s.Output) > 200_000 || !strings.Contains(s.Output, "Result cut") {
		t.Errorf("the step's output is %d bytes, without the note", len(s.Output))
	}
}
