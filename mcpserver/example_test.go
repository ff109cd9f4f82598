package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A local tool published over MCP: the client sees its schema as written
// and gets its output as text and as structuredContent.
func ExampleNew() {
	greet := &agent.Tool{
		Name:        "greet",
		Description: "Greets someone by name.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		ReadOnly:    true,
		Execute: func(_ context.Context, args json.RawMessage) (any, error) {
			var in struct{ Name string }
			if err := json.Unmarshal(args, &in); err != nil {
				return nil, err
			}
			return map[string]string{"greeting": "hello, " + in.Name}, nil
		},
	}
	srv := mcpserver.New(&mcpserver.Options{Name: "example", Version: "1", Tools: []*agent.Tool{greet}})

	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	res, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{}})
	fmt.Println(res.IsError)
	// Output:
	// {"greeting":"hello, Ada"}
	// true
}
