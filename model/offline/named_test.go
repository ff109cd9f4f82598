package offline_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
)

// TestNamedTools: a message that names a connected server's tool makes the
// offline model call it (plain-word names only after "use" and the like),
// several named tools are called at once, and a refused call is reported
// as not done.
func TestNamedTools(t *testing.T) {
	var seen []string
	answer := func(out string) func(map[string]any) (any, error) {
		return func(map[string]any) (any, error) { return json.RawMessage(out), nil }
	}
	extra := []*agent.Tool{
		tool("read_graph", `{"type":"object"}`, &seen, answer(`{"entities":[]}`)),
		tool("echo", `{"type":"object"}`, &seen, answer(`{"echo":"hi"}`)),
		tool("refund", `{"type":"object"}`, &seen, answer(`{"denied":true,"reason":"the user did not approve the call to tool refund (server shop)"}`)),
	}
	base := fakeTools("", &seen).Tools()
	set := agent.MustToolSet(append(base, extra...)...)
	tests := []struct {
		msg    string
		calls  []string
		answer []string
	}{
		{"use read_graph", []string{"read_graph {}"}, []string{`The tool read_graph returned: {"entities":[]}`}},
		{"please use echo with {\"text\":\"hi\"}", []string{`echo {"text":"hi"}`}, []string{"The tool echo returned"}},
		{"use read_graph and getOrderStatus for A-1024",
			[]string{"read_graph {}", `getOrderStatus {"orderId":"A-1024"}`},
			[]string{"read_graph returned", "The status of order A-1024"}},
		// "echo" is an everyday word: not a call without "use".
		{"does the hall echo?", []string{`searchKnowledge {"query":"does the hall echo?","k":3}`}, nil},
		{"use refund now", []string{"refund {}"}, []string{"I did not run refund: the call was refused", "Nothing was done."}},
	}
	for _, tt := range tests {
		seen = nil
		res, err := agent.Run(context.Background(), agent.Options{
			Model:    offline.New(offline.DemoTools),
			Messages: []model.Message{{Role: model.RoleUser, Content: tt.msg}},
			Tools:    set,
		})
		if err != nil {
			t.Fatalf("%q: %v", tt.msg, err)
		}
		// The calls of one step run at once, in any order.
		slices.Sort(seen)
		want := slices.Sorted(slices.Values(tt.calls))
		if strings.Join(seen, "\n") != strings.Join(want, "\n") {
			t.Errorf("%q: calls %q, want %q", tt.msg, seen, tt.calls)
		}
		for _, a := range tt.answer {
			if !strings.Contains(res.Text, a) {
				t.Errorf("%q: answer %q lacks %q", tt.msg, res.Text, a)
			}
		}
		if strings.Contains(res.Text, "went through") {
			t.Errorf("%q: answer claims success: %q", tt.msg, res.Text)
		}
	}
}
