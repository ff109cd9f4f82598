package mcpconfig_test

import (
	"fmt"

	"github.com/agentapp/agentapp/mcpconfig"
)

// The --mcp form: a command line whose first word is the command; the
// server is named after what it runs.
func ExampleParseCommandLine() {
	s, err := mcpconfig.ParseCommandLine("npx -y @modelcontextprotocol/server-memory")
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Command, s.Args)
	// Output: server-memory npx [-y @modelcontextprotocol/server-memory]
}
