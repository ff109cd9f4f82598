package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
)

// Missing required arguments read as "topic is required"; a schema the
// validator cannot compile stops a local tool's calls (a bug of ours) but
// leaves an MCP tool's to its server.
func TestCheckArgsMissingAndUncompilable(t *testing.T) {
	tool := &agent.Tool{Name: "research", Origin: "everything", Validate: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"},"depth":{"type":"integer"}},"required":["topic"]}`)}
	if err := tool.CheckArgs(json.RawMessage(`{}`)); err == nil || err.Error() != "invalid arguments for research: topic is required" {
		t.Errorf("{}: %v", err)
	}
	two := &agent.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object","required":["a","b \"c\"","d"]}`)}
	if err := two.CheckArgs(json.RawMessage(`{}`)); err == nil || err.Error() != `invalid arguments for two: a, b "c" and d are required` {
		t.Errorf("three missing: %v", err)
	}
	if err := tool.CheckArgs(json.RawMessage(`{"topic":"go","depth":"deep"}`)); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Errorf("a wrong type: %v", err)
	}
	bad := json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`)
	remote := &agent.Tool{Name: "r", Origin: "srv", InputSchema: bad}
	if err := remote.CheckArgs(json.RawMessage(`{"a":1}`)); err != nil {
		t.Errorf("an MCP tool whose schema does not compile: %v; want the call left to the server", err)
	}
	local := &agent.Tool{Name: "l", InputSchema: bad}
	if err := local.CheckArgs(json.RawMessage(`{"a":1}`)); err == nil {
		t.Error("a local tool whose schema does not compile was let through")
	}
}
