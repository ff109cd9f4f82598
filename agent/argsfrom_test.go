package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
)

// TestArgsFromMatchesDecodeArgs: the arguments CheckArgsFor hands to the
// tool are DecodeArgs' decoding of the same bytes, and bytes other than
// those checked (even equal text elsewhere in memory) are decoded afresh.
func TestArgsFromMatchesDecodeArgs(t *testing.T) {
	tool := &agent.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	inputs := []string{``, `null`, ` {} `, `{"a":"1"}`, `{"a":"1","a":"2"}`, `{"a":{"b":[1,2.5,null]},"c":true}`, `{"k":"\u00e9\n"}`}
	for _, in := range inputs {
		raw := json.RawMessage(in)
		ctx, err := tool.CheckArgsFor(context.Background(), raw)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		want, _ := agent.DecodeArgs(raw)
		got, err := agent.ArgsFrom(ctx, raw)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q: ArgsFrom = %#v, %v; DecodeArgs = %#v", in, got, err, want)
		}
		checked := got
		other := json.RawMessage(`{"other":"x"}`)
		if got, _ := agent.ArgsFrom(ctx, other); !reflect.DeepEqual(got, map[string]any{"other": "x"}) {
			t.Errorf("%q: ArgsFrom on other arguments = %#v", in, got)
		}
		if in != "" {
			copied := json.RawMessage(strings.Clone(in) + " ")
			copied = copied[:len(in)]
			if got, _ := agent.ArgsFrom(ctx, copied); reflect.ValueOf(got).UnsafePointer() == reflect.ValueOf(checked).UnsafePointer() {
				t.Errorf("%q: a copy of the checked bytes got the checked map", in)
			}
		}
	}
	if _, err := agent.ArgsFrom(context.Background(), json.RawMessage(`[1]`)); err == nil || err.Error() != "arguments must be a JSON object, got an array" {
		t.Errorf("ArgsFrom without a check: error %v, want DecodeArgs' own", err)
	}
	if _, err := tool.CheckArgsFor(context.Background(), json.RawMessage(`[1]`)); err == nil {
		t.Error("CheckArgsFor accepted an array")
	}
}
