package mcpclient

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolNamesMappedOrSkipped: names providers refuse are mapped; a tool
// without a name, the second of two tools of one name and a mapped name
// that another tool has are skipped with a warning; a valid name is never
// shadowed, whatever the order.
func TestToolNamesMappedOrSkipped(t *testing.T) {
	logger, logs := testkit.NewLogger()
	cfg := mcpconfig.Server{Name: "bad", Command: testServerPath(t), Args: []string{"-mode", "bad-names"}, ToolPrefix: "p_"}
	b, err := Connect(context.Background(), cfg, WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var names []string
	for _, tl := range b.Tools() {
		if !mcpconfig.ValidToolName(tl.Name) {
			t.Errorf("offered %q", tl.Name)
		}
		names = append(names, tl.Name)
	}
	want := []string{"p_ok"}
	for _, n := range []string{"new\nline", "esc\x1b[31mred", "with space", "ünïcødé", strings.Repeat("long", 17)} {
		m, _ := mcpconfig.ExposedName("p_", n)
		want = append(want, m)
	}
	a1, _ := mcpconfig.ExposedName("p_", "a.b")
	a2, _ := mcpconfig.ExposedName("p_", "a b")
	want = append(want, "p_dup", a1, a2)
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("tools\n%q\nwant\n%q", names, want)
	}
	if r, ok := b.RemoteName(want[2]); !ok || r != "esc\x1b[31mred" {
		t.Errorf("RemoteName(%s) = %q, %v", want[2], r, ok)
	}
	if got, err := adExec(t, b.Tools()[2], `{}`); err != nil || got != "called esc\x1b[31mred" {
		t.Errorf("the mapped tool called %q, %v", got, err)
	}
	for _, w := range []string{"a tool without a name; skipped", "a second tool of the same name; skipped", "it is offered under a mapped name", "as=" + want[2]} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs)
		}
	}

	// A mapped name that a valid name of the server already has: the
	// valid one keeps it, wherever it is listed.
	shadow, _ := mcpconfig.ExposedName("", "a b")
	for _, order := range [][]string{{"a b", shadow}, {shadow, "a b"}} {
		srv := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
		for _, n := range order {
			srv.AddTool(&mcp.Tool{Name: n, InputSchema: json.RawMessage(`{"type":"object"}`)}, adFixed(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "from " + n}}}))
		}
		logger, logs := testkit.NewLogger()
		b, err := ConnectInMemory(context.Background(), "mem", srv, WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if tools := b.Tools(); len(tools) != 1 || tools[0].Name != shadow {
			t.Fatalf("order %q: tools %v", order, toolNames(b))
		}
		if got, _ := adExec(t, b.Tools()[0], `{}`); got != "from "+shadow {
			t.Errorf("order %q: %s calls %q, want the valid tool", order, shadow, got)
		}
		if !strings.Contains(logs.String(), "its mapped name is taken by another tool of the server; skipped") {
			t.Errorf("order %q: log:\n%s", order, logs)
		}
	}
}
