package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
)

// TestREPLShowsCut: a tool result over the cap is announced on the
// terminal, with its size and handle, and the model sees the cut text.
func TestREPLShowsCut(t *testing.T) {
	m := &ruleModel{}
	big := strings.Repeat("word ", 40_000) // about 40,000 tokens
	h := newHarness(t, m, openTestStore(t), "call:big\n/exit\n")
	h.host.Local = append(h.host.Local, constTool("big", "", big))
	h.run(t)
	if want := fmt.Sprintf("✂ big returned %d bytes", len(big)); !strings.Contains(h.err.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, h.err.String())
	}
	if last := m.lastRequest(); last == nil || len(last.Messages[len(last.Messages)-1].Content) >= len(big) {
		t.Error("the model was sent the whole result")
	}
}

// TestToolsShowsToolSearch: with more than 40 MCP tools /tools says they
// are deferred behind searchTools and lists them as not loaded.
func TestToolsShowsToolSearch(t *testing.T) {
	var tools []*agent.Tool
	for i := range 45 {
		tools = append(tools, constTool(fmt.Sprintf("t%02d", i), "many", "x"))
	}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "/tools\n/exit\n")
	h.host.Servers = []host.Server{&fakeServer{name: "many", tools: tools}}
	h.run(t)
	out := h.out.String()
	for _, want := range []string{"Tool search: on (45 MCP tools, more than 40)", "loaded in this session (0): none", "deferred, found by searchTools (45): t00, t01"} {
		if !strings.Contains(out, want) {
			t.Errorf("/tools lacks %q:\n%s", want, out)
		}
	}
}

// TestToolsUnload: /tools unload NAME removes a tool the session loaded
// (here by calling it by name), and says so; unloading it again, or a
// tool never loaded, is refused with what is loaded.
func TestToolsUnload(t *testing.T) {
	var tools []*agent.Tool
	for i := range 45 {
		tools = append(tools, constTool(fmt.Sprintf("t%02d", i), "many", "x"))
	}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "call:t07\n/tools unload t07\n/tools\n/tools unload t07\n/tools drop\n/exit\n")
	h.host.Servers = []host.Server{&fakeServer{name: "many", tools: tools}}
	h.run(t)
	out := h.out.String()
	for _, want := range []string{"Unloaded t07: the model is no longer offered it", "loaded in this session (0): none",
		`Cannot unload: the tool is not loaded in this session: "t07" (no tool is loaded)`, "Usage: /tools (list the tools) or /tools unload NAME"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
}
