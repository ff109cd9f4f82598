package wiring_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering holds the import graph to the layout the README describes:
// the MCP packages know nothing of the domain or the chat, the engine
// nothing of MCP, and guard nothing of the knowledge base. A new import
// that breaks a rule fails here rather than in a later review.
func TestLayering(t *testing.T) {
	const mod = "github.com/agentapp/agentapp/"
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"mcpserver", []string{"support", "kb", "store", "chat", "mcpclient", "guard"}},
		{"mcpclient", []string{"support", "kb", "store", "chat", "mcpserver", "guard"}},
		{"mcpconfig", []string{"support", "kb", "store", "chat", "mcpserver", "mcpclient", "agent"}},
		{"agent", []string{"mcpserver", "mcpclient", "mcpconfig", "chat", "guard", "support", "kb", "store", "trace"}},
		{"guard", []string{"kb", "store", "support", "chat", "mcpserver", "mcpclient"}},
		// web sits beside chat: it uses the chat's machinery, never the
		// other way round, and reaches MCP servers only through mcpclient.
		{"web", []string{"mcpserver", "cmd/agentapp"}},
		{"chat", []string{"web"}},
		// The context budget's libraries sit beside the engine: the host
		// plugs them in, and they know nothing of MCP or the domain.
		{"budget", []string{"agent", "mcpserver", "mcpclient", "mcpconfig", "chat", "web", "guard", "support", "kb", "store"}},
		{"resultstore", []string{"mcpserver", "mcpclient", "mcpconfig", "chat", "web", "guard", "support", "kb", "store"}},
		{"toolsearch", []string{"mcpserver", "mcpclient", "mcpconfig", "chat", "web", "guard", "support", "kb", "store"}},
		{"internal/texttok", []string{"kb", "store", "agent"}},
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", mod+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", r.pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, f := range r.forbidden {
			if slices.Contains(deps, mod+f) {
				t.Errorf("%s depends on %s; the layout forbids it (see the README's layout paragraph)", r.pkg, f)
			}
		}
	}
}
