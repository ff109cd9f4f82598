package support_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/google/jsonschema-go/jsonschema"
)

// TestOutputsMatchOutputSchemas checks every kind of result against the
// tool's OutputSchema: the MCP server sends results as structuredContent,
// which clients validate against the schema it published.
func TestOutputsMatchOutputSchemas(t *testing.T) {
	svc, _ := openService(t, t.TempDir())
	tests := []struct {
		tool *agent.Tool
		args string
	}{
		{svc.OrderStatusTool(), `{"orderId":"A-1024"}`},
		{svc.OrderStatusTool(), `{"orderId":"Z-0000"}`},
		{svc.CreateTicketTool(), `{"subject":"退款","description":"订单 A-2048 申请退款"}`},
		{svc.EscalateTool(), `{"reason":"客户要求人工","transcript":"用户: 转人工"}`},
	}
	for _, tt := range tests {
		var s jsonschema.Schema
		if err := json.Unmarshal(tt.tool.OutputSchema, &s); err != nil {
			t.Fatalf("%s: %v", tt.tool.Name, err)
		}
		resolved, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: output schema does not resolve: %v", tt.tool.Name, err)
		}
		out, err := tt.tool.Execute(context.Background(), json.RawMessage(tt.args))
		if err != nil {
			t.Fatalf("%s %s: %v", tt.tool.Name, tt.args, err)
		}
		text, err := agent.FormatOutput(out)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(text), &v); err != nil {
			t.Fatalf("%s: output %s is not a JSON object: %v", tt.tool.Name, text, err)
		}
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s %s: output %s does not match the output schema: %v", tt.tool.Name, tt.args, text, err)
		}
	}
}
