package mcpconfig_test

import (
	"fmt"

	"github.com/agentapp/agentapp/mcpconfig"
)

// The --mcp form: a command line whose first word is the command; the
// server is named after what it runs, or by a NAME= prefix.
func ExampleParseCommandLine() {
	s, _, err := mcpconfig.ParseCommandLine("npx -y @modelcontextprotocol/server-memory", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Name, s.Command, s.Args)

	home := func(name string) (string, bool) {
		if name == "HOME" {
			return "/Users/ann", true
		}
		return "", false
	}
	s, named, err := mcpconfig.ParseCommandLine(`mine=node "$HOME/Library/Application Support/mine/server.js"`, home)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %v %s %q\n", s.Name, named, s.Command, s.Args)
	// Output:
	// server-memory npx [-y @modelcontextprotocol/server-memory]
	// mine true node ["/Users/ann/Library/Application Support/mine/server.js"]
}
