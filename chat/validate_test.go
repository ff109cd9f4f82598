package chat

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingCaller is an MCP connection that records the calls it is sent.
type countingCaller struct {
	mu   sync.Mutex
	args []json.RawMessage
}

func (c *countingCaller) CallTool(_ context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	b, _ := json.Marshal(p.Arguments)
	c.mu.Lock()
	c.args = append(c.args, b)
	c.mu.Unlock()
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "researched"}}}, nil
}

// TestMCPCallMissingRequiredArgument (issue 43, item 7): the model calls
// an MCP tool (server-everything's simulate-research-query, whose topic is
// required) with {}: the user is not asked to approve it, the server is not
// sent it, and the model and the user read "topic is required". With the
// topic the call reaches the approval (refused here: stdin is no terminal).
func TestMCPCallMissingRequiredArgument(t *testing.T) {
	caller := &countingCaller{}
	schema := json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"The research topic"},"ambiguous":{"type":"boolean"}},"required":["topic"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`)
	tool := mcpclient.AdaptTool(caller, "everything", &mcp.Tool{Name: "simulate-research-query", Description: "Research."}, schema, 0)
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "call:simulate-research-query {}\ncall:simulate-research-query {\"topic\":\"Go\"}\n/exit\n")
	h.host.Servers = []host.Server{&fakeServer{name: "everything", tools: []*agent.Tool{tool}}}
	h.host.Guards = &guard.Config{} // asks before MCP tools not declared read-only
	h.run(t)
	all := h.out.String() + h.err.String()
	if n := strings.Count(all, "simulate-research-query (server everything) needs confirmation"); n != 1 {
		t.Errorf("the approval was asked %d times; want once, for the call with its topic:\n%s", n, all)
	}
	if !strings.Contains(all, "topic is required") {
		t.Errorf("the user is not told the topic is required:\n%s", all)
	}
	var sawModel bool
	for _, r := range m.requests {
		for _, msg := range r.Messages {
			sawModel = sawModel || strings.Contains(msg.Content, "invalid arguments for simulate-research-query: topic is required")
		}
	}
	if !sawModel {
		t.Error("the model was not told the topic is required")
	}
	caller.mu.Lock()
	defer caller.mu.Unlock()
	if len(caller.args) != 0 {
		t.Errorf("the server was sent %s; want nothing", caller.args)
	}
}
