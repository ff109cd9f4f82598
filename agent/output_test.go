package agent_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/agentapp/agentapp/agent"
)

// TestEncodeOutputMatchesFormatOutput: a JSONOutput gives the same text as
// FormatOutput of the value it was made from, byte for byte, and its quoted
// form and its own JSON encoding are what encoding/json makes of that text.
func TestEncodeOutputMatchesFormatOutput(t *testing.T) {
	type order struct {
		OrderID string `json:"orderId"`
		Status  string `json:"status"`
		ETA     string `json:"eta,omitempty"`
	}
	values := []any{
		order{OrderID: "A-1024", Status: "已发货", ETA: "明天 18:00 前送达"},
		order{OrderID: "<b>&</b>", Status: "line\nbreak \u2028 \u2029 \"quoted\" \\ \x01"},
		map[string]any{"found": false, "n": 1.5, "list": []int{1, 2}, "nested": map[string]string{"k": "<v>"}},
		[]string{"a", "b"},
		"a plain string",
		42,
		nil,
	}
	for _, v := range values {
		o, err := agent.EncodeOutput(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		plain, err := json.Marshal(v) // FormatOutput's plain path for a value
		if err != nil {
			t.Fatal(err)
		}
		got, err := agent.FormatOutput(o)
		if err != nil || got != string(plain) {
			t.Errorf("%#v: FormatOutput(EncodeOutput) = %q, %v; want %q", v, got, err, plain)
		}
		if s := o.String(); s != string(plain) {
			t.Errorf("%#v: String() = %q, want %q", v, s, plain)
		}
		quoted, _ := json.Marshal(string(plain))
		if o.Quoted() != string(quoted) {
			t.Errorf("%#v: Quoted() = %q, want %q", v, o.Quoted(), quoted)
		}
		enc, err := json.Marshal(o)
		if err != nil || string(enc) != string(plain) {
			t.Errorf("%#v: json.Marshal(JSONOutput) = %q, %v; want %q", v, enc, err, plain)
		}
		if want := len(plain) > 0 && plain[0] == '{'; o.IsObject() != want {
			t.Errorf("%#v: IsObject() = %v, want %v", v, o.IsObject(), want)
		}
	}
}

// TestJSONOutputZeroIsNull: the zero value reads as FormatOutput(nil).
func TestJSONOutputZeroIsNull(t *testing.T) {
	var o agent.JSONOutput
	plain, _ := agent.FormatOutput(nil)
	if got, _ := agent.FormatOutput(o); got != plain || o.Quoted() != `"null"` || o.IsObject() {
		t.Errorf("zero JSONOutput: text %q, quoted %q, object %v; want %q, \"null\" quoted, not an object", got, o.Quoted(), o.IsObject(), plain)
	}
	if enc, err := json.Marshal(o); err != nil || string(enc) != "null" {
		t.Errorf("json.Marshal(zero JSONOutput) = %q, %v", enc, err)
	}
}

// TestEncodeOutputError: a value encoding/json cannot encode fails with the
// message FormatOutput gives for it.
func TestEncodeOutputError(t *testing.T) {
	_, err := agent.EncodeOutput(math.Inf(1))
	_, plain := agent.FormatOutput(math.Inf(1))
	if err == nil || plain == nil || err.Error() != plain.Error() {
		t.Errorf("EncodeOutput error %v; FormatOutput error %v; want the same", err, plain)
	}
}
