package support_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/support"
)

func TestToolMetadata(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	tests := []struct {
		get        func() *agent.Tool
		name       string
		readOnly   bool
		idempotent bool
	}{
		{svc.OrderStatusTool, "getOrderStatus", true, true},
		{svc.CreateTicketTool, "createTicket", false, false},
		{svc.EscalateTool, "escalateToHuman", false, false},
	}
	for _, tt := range tests {
		tool := tt.get()
		if tool != tt.get() {
			t.Errorf("%s: two calls returned different *agent.Tool values", tt.name)
		}
		if tool.Name != tt.name || tool.Title == "" || len(tool.Description) < 100 {
			t.Errorf("%s: name %q, title %q, description of %d bytes", tt.name, tool.Name, tool.Title, len(tool.Description))
		}
		if tool.ReadOnly != tt.readOnly || tool.Idempotent != tt.idempotent || !tool.Validate || !tool.IsLocal() || tool.Execute == nil {
			t.Errorf("%s: flags ReadOnly=%v Idempotent=%v Validate=%v Origin=%q", tt.name, tool.ReadOnly, tool.Idempotent, tool.Validate, tool.Origin)
		}
		for what, raw := range map[string]json.RawMessage{"input": tool.InputSchema, "output": tool.OutputSchema} {
			var s map[string]any
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s: %s schema is not JSON: %v", tt.name, what, err)
			}
			if s["type"] != "object" {
				t.Errorf("%s: %s schema type = %v, want object", tt.name, what, s["type"])
			}
		}
	}
	if _, err := agent.NewToolSet(svc.OrderStatusTool(), svc.CreateTicketTool(), svc.EscalateTool()); err != nil {
		t.Fatal(err)
	}
}

func TestSchemasAreSharedBetweenServices(t *testing.T) {
	a, _ := openService(t, t.TempDir())
	b, _ := openService(t, t.TempDir())
	if &a.OrderStatusTool().InputSchema[0] != &b.OrderStatusTool().InputSchema[0] {
		t.Error("two services hold different copies of the getOrderStatus schema; it should be one package-level value")
	}
}

// TestSchemasStateTheLimits checks that the published schemas carry the
// limits Execute enforces, so a client reading the schema learns the rules.
func TestSchemasStateTheLimits(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	want := map[string]map[string]float64{
		"getOrderStatus":  {"orderId": 32},
		"createTicket":    {"subject": 200, "description": 4000},
		"escalateToHuman": {"reason": 500, "transcript": 20000},
	}
	for _, tool := range []*agent.Tool{svc.OrderStatusTool(), svc.CreateTicketTool(), svc.EscalateTool()} {
		var s struct {
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tool.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: additionalProperties is not false", tool.Name)
		}
		if len(s.Required) != len(want[tool.Name]) {
			t.Errorf("%s: required = %v", tool.Name, s.Required)
		}
		for field, limit := range want[tool.Name] {
			if got := s.Properties[field]["maxLength"]; got != limit {
				t.Errorf("%s.%s: maxLength = %v, want %v", tool.Name, field, got, limit)
			}
		}
	}
}

// TestArgumentRules runs each case through the schema (CheckArgs, what the
// loop and the MCP server do) and through Execute alone (what happens when
// nothing validated first). Both must accept or reject alike, and a
// rejection must name the field.
func TestArgumentRules(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	han := "汉" // one code point, three bytes: limits count characters
	tests := []struct {
		tool *agent.Tool
		args string
		// wantErr is a substring both errors contain; "" means valid.
		wantErr string
	}{
		{svc.OrderStatusTool(), `{"orderId":"A-1024"}`, ""},
		{svc.OrderStatusTool(), `{"orderId":"B-0001"}`, ""},
		{svc.OrderStatusTool(), `{"orderId":"  A-2048\t"}`, ""},
		{svc.OrderStatusTool(), `{"orderId":"ZZ-99999999"}`, ""},
		{svc.OrderStatusTool(), `{}`, "orderId"},
		{svc.OrderStatusTool(), `null`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":1024}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":null}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":"a-1024"}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":"A1024"}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":"A-102"}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":"ABCDE-1024"}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":"A-1024; DROP TABLE"}`, "orderId"},
		{svc.OrderStatusTool(), `{"orderId":""}`, "orderId"},
		{svc.OrderStatusTool(), fmt.Sprintf(`{"orderId":"A-1024%s"}`, strings.Repeat(" ", 27)), "orderId"}, // 33 characters
		{svc.OrderStatusTool(), `{"orderId":"A-1024","verbose":true}`, "verbose"},
		{svc.OrderStatusTool(), `[]`, "object"},
		{svc.OrderStatusTool(), `"A-1024"`, "object"},

		{svc.CreateTicketTool(), `{"subject":"退款","description":"订单 A-1024 破损，申请退款"}`, ""},
		{svc.CreateTicketTool(), fmt.Sprintf(`{"subject":%q,"description":%q}`, strings.Repeat(han, 200), strings.Repeat(han, 4000)), ""},
		{svc.CreateTicketTool(), fmt.Sprintf(`{"subject":%q,"description":"x"}`, strings.Repeat(han, 201)), "subject"},
		{svc.CreateTicketTool(), fmt.Sprintf(`{"subject":"x","description":%q}`, strings.Repeat("a", 4001)), "description"},
		{svc.CreateTicketTool(), `{"subject":"退款"}`, "description"},
		{svc.CreateTicketTool(), `{"description":"退款"}`, "subject"},
		{svc.CreateTicketTool(), `{"subject":["退款"],"description":"x"}`, "subject"},
		{svc.CreateTicketTool(), `{"subject":"x","description":true}`, "description"},
		{svc.CreateTicketTool(), `{"subject":" \n\t ","description":"x"}`, "subject"},
		{svc.CreateTicketTool(), `{"subject":"x","description":""}`, "description"},
		{svc.CreateTicketTool(), `{"subject":"x","description":"y","priority":"high"}`, "priority"},

		{svc.EscalateTool(), `{"reason":"客户要求人工","transcript":"用户: 转人工\n助手: 好的"}`, ""},
		{svc.EscalateTool(), fmt.Sprintf(`{"reason":%q,"transcript":%q}`, strings.Repeat(han, 500), strings.Repeat(han, 20000)), ""},
		{svc.EscalateTool(), fmt.Sprintf(`{"reason":%q,"transcript":"x"}`, strings.Repeat("r", 501)), "reason"},
		{svc.EscalateTool(), fmt.Sprintf(`{"reason":"x","transcript":%q}`, strings.Repeat(han, 20001)), "transcript"},
		{svc.EscalateTool(), `{"reason":"x"}`, "transcript"},
		{svc.EscalateTool(), `{"reason":42,"transcript":"x"}`, "reason"},
		{svc.EscalateTool(), `{"reason":"  ","transcript":"x"}`, "reason"},
		{svc.EscalateTool(), `{"reason":"x","transcript":"y","userId":"u1"}`, "userId"},
	}
	for _, tt := range tests {
		name := tt.tool.Name + " " + tt.args
		if len(name) > 80 {
			name = name[:80]
		}
		t.Run(name, func(t *testing.T) {
			schemaErr := tt.tool.CheckArgs(json.RawMessage(tt.args))
			_, execErr := tt.tool.Execute(context.Background(), json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if schemaErr != nil {
					t.Errorf("CheckArgs rejected valid arguments: %v", schemaErr)
				}
				if execErr != nil {
					t.Errorf("Execute rejected valid arguments: %v", execErr)
				}
				return
			}
			if schemaErr == nil || !strings.Contains(schemaErr.Error(), tt.wantErr) {
				t.Errorf("CheckArgs error = %v, want one mentioning %q", schemaErr, tt.wantErr)
			}
			if execErr == nil || !strings.Contains(execErr.Error(), tt.wantErr) {
				t.Errorf("Execute error = %v, want one mentioning %q", execErr, tt.wantErr)
			}
		})
	}
}

func TestExecuteLimitErrorsStateTheLimit(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	args := mustJSON(t, map[string]string{"subject": strings.Repeat("字", 250), "description": "x"})
	_, err := svc.CreateTicketTool().Execute(context.Background(), args)
	var ae *support.ArgError
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v (%T), want *support.ArgError", err, err)
	}
	if ae.Field != "subject" || !strings.Contains(err.Error(), "250 characters") || !strings.Contains(err.Error(), "limit is 200") {
		t.Errorf("error = %q, want it to name subject, its length 250 and the limit 200", err)
	}
}
