package support_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestCheckArgsAgreesWithTheValidator compares CheckArgs on every support
// tool with the general JSON Schema validator applied directly: the same
// arguments must be accepted, and a rejection must carry the validator's
// own message. CheckArgs has a direct path for flat string schemas like
// these; this is what keeps it from accepting anything the validator
// rejects.
func TestCheckArgsAgreesWithTheValidator(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	tools := []*agent.Tool{svc.OrderStatusTool(), svc.CreateTicketTool(), svc.EscalateTool()}

	str := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	values := []string{
		`null`, `1`, `true`, `[]`, `{}`, `""`, `" "`, `"\t\n"`,
		str("A-1024"), str(" A-1024 "), str("a-1024"), str("A-12"), str("ABCDE-1024"), str("A-1024\n"),
		str("A-" + strings.Repeat("1", 12)), str("A-" + strings.Repeat("1", 13)),
		str(strings.Repeat("x", 32)), str(strings.Repeat("x", 33)), str(strings.Repeat("é", 32)), str(strings.Repeat("é", 33)),
		str(strings.Repeat("订", 200)), str(strings.Repeat("订", 201)), str(strings.Repeat("a", 500)), str(strings.Repeat("a", 501)),
		str("退款"), str("x\u00a0"),
	}
	for _, tool := range tools {
		var s jsonschema.Schema
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		ref, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for name := range s.Properties {
			names = append(names, name)
		}
		var cases []string
		for _, v := range values {
			for _, name := range names {
				cases = append(cases, fmt.Sprintf(`{%q:%s}`, name, v))
			}
			if len(names) == 2 {
				cases = append(cases,
					fmt.Sprintf(`{%q:%s,%q:"ok"}`, names[0], v, names[1]),
					fmt.Sprintf(`{%q:"ok",%q:%s}`, names[0], names[1], v),
					fmt.Sprintf(`{%q:%s,%q:"ok","extra":1}`, names[0], v, names[1]))
			}
		}
		cases = append(cases, `{}`, `null`, ``, `{"other":"A-1024"}`, `{"orderId":"A-1024","x":null}`,
			// A duplicate key counts with its last value.
			`{"orderId":"bad","orderId":"A-1024"}`, `{"orderId":"A-1024","orderId":"bad"}`,
			`{"subject":"ok","subject":"","description":"ok"}`, `{"subject":"","subject":"ok","description":"ok"}`)
		for _, args := range cases {
			got := tool.CheckArgs(json.RawMessage(args))
			m, decErr := agent.DecodeArgs(json.RawMessage(args))
			if decErr != nil {
				t.Fatalf("%s: test arguments %s do not decode: %v", tool.Name, args, decErr)
			}
			want := ref.Validate(m)
			unknown := 0
			for k := range m {
				if s.Properties[k] == nil {
					unknown++
				}
			}
			switch {
			case want == nil && got != nil:
				t.Errorf("%s %s: CheckArgs rejects (%v), the validator accepts", tool.Name, args, got)
			case want != nil && got == nil:
				t.Errorf("%s %s: CheckArgs accepts, the validator rejects (%v)", tool.Name, args, want)
			case want != nil && unknown <= 1 && got.Error() != (&agent.ArgsError{Tool: tool.Name, Err: want}).Error():
				// (The validator lists several unknown properties in map
				// order, so only messages about at most one are compared.)
				t.Errorf("%s %s: message %q, want %q", tool.Name, args, got, want)
			}
		}
	}
}
