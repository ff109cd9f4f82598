package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/google/go-cmp/cmp"
)

func mergeTool(name, origin string) *agent.Tool {
	return &agent.Tool{
		Name:   name,
		Origin: origin,
		Execute: func(context.Context, json.RawMessage) (any, error) {
			return origin + ":" + name, nil
		},
	}
}

func localTools() []*agent.Tool {
	return []*agent.Tool{
		mergeTool("getOrderStatus", ""),
		mergeTool("createTicket", ""),
		mergeTool("escalateToHuman", ""),
		mergeTool("searchKnowledgeBase", ""),
	}
}

func agentappServer() serverTools {
	return serverTools{server: "agentapp", tools: []*agent.Tool{
		mergeTool("getOrderStatus", "agentapp"),
		mergeTool("createTicket", "agentapp"),
		mergeTool("searchKnowledge", "agentapp"),
	}}
}

// origins lists "name@origin" for each tool of the set, in order, so a test
// sees both which tool won and where it sits in the table.
func origins(s *agent.ToolSet) []string {
	var out []string
	for _, t := range s.Tools() {
		o := t.Origin
		if o == "" {
			o = "local"
		}
		out = append(out, t.Name+"@"+o)
	}
	return out
}

func TestMergeDefaultMCPWins(t *testing.T) {
	set, rep, err := merge(localTools(), []serverTools{agentappServer()}, false, testHints)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"escalateToHuman@local", "searchKnowledgeBase@local",
		"getOrderStatus@agentapp", "createTicket@agentapp", "searchKnowledge@agentapp",
	}
	if diff := cmp.Diff(want, origins(set)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	wantOver := []Clash{{"getOrderStatus", "agentapp"}, {"createTicket", "agentapp"}}
	if diff := cmp.Diff(wantOver, rep.Overridden); diff != "" {
		t.Errorf("overridden (-want +got):\n%s", diff)
	}
	if len(rep.Skipped) != 0 {
		t.Errorf("skipped = %v, want none", rep.Skipped)
	}
	if len(rep.Warnings) != 1 {
		t.Fatalf("warnings = %q, want exactly one", rep.Warnings)
	}
	w := rep.Warnings[0]
	for _, s := range []string{"getOrderStatus (from agentapp)", "createTicket (from agentapp)", "override", "; set THE_SWITCH=1 to keep the local tools instead"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q does not mention %q", w, s)
		}
	}
	// The winning tool is the server's: calling it reaches the MCP tool.
	tool, _ := set.Get("getOrderStatus")
	out, _ := tool.Execute(context.Background(), nil)
	if out != "agentapp:getOrderStatus" {
		t.Errorf("getOrderStatus ran %v, want the MCP tool", out)
	}
}

// testHints stand for the words of the program that defines the switches.
var testHints = Hints{KeepLocalTools: "set THE_SWITCH=1", LocalToolsWin: "THE_SWITCH is set"}

// The host names no environment variable or flag: without hints, its merge
// warnings say what happened and nothing more.
func TestMergeWarningsNameNoSwitch(t *testing.T) {
	for _, strict := range []bool{false, true} {
		_, rep, err := merge(localTools(), []serverTools{agentappServer()}, strict, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Warnings) != 1 {
			t.Fatalf("strict=%v: warnings = %q, want exactly one", strict, rep.Warnings)
		}
		w := rep.Warnings[0]
		if strings.Contains(w, "AGENT_") || strings.Contains(w, "--") || !strings.Contains(w, "getOrderStatus (from agentapp)") {
			t.Errorf("strict=%v: warning %q names a switch or misses the clash", strict, w)
		}
	}
}

func TestMergeStrictLocalWins(t *testing.T) {
	set, rep, err := merge(localTools(), []serverTools{agentappServer()}, true, testHints)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"getOrderStatus@local", "createTicket@local", "escalateToHuman@local", "searchKnowledgeBase@local",
		"searchKnowledge@agentapp",
	}
	if diff := cmp.Diff(want, origins(set)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	wantSkipped := []Clash{{"getOrderStatus", "agentapp"}, {"createTicket", "agentapp"}}
	if diff := cmp.Diff(wantSkipped, rep.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(rep.Overridden) != 0 {
		t.Errorf("overridden = %v, want none", rep.Overridden)
	}
	if len(rep.Warnings) != 1 {
		t.Fatalf("warnings = %q, want exactly one", rep.Warnings)
	}
	w := rep.Warnings[0]
	for _, s := range []string{"THE_SWITCH is set, so local tools win", "getOrderStatus (from agentapp)", "createTicket (from agentapp)", "skipped"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning %q does not mention %q", w, s)
		}
	}
}

func TestMergeNoClash(t *testing.T) {
	files := serverTools{server: "files", tools: []*agent.Tool{mergeTool("read_file", "files"), mergeTool("list_directory", "files")}}
	memory := serverTools{server: "memory", tools: []*agent.Tool{mergeTool("create_entities", "memory")}}
	for _, strict := range []bool{false, true} {
		set, rep, err := merge(localTools(), []serverTools{files, memory}, strict, Hints{})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"getOrderStatus@local", "createTicket@local", "escalateToHuman@local", "searchKnowledgeBase@local",
			"read_file@files", "list_directory@files", "create_entities@memory",
		}
		if diff := cmp.Diff(want, origins(set)); diff != "" {
			t.Errorf("strict=%v: table (-want +got):\n%s", strict, diff)
		}
		if len(rep.Warnings)+len(rep.Overridden)+len(rep.Skipped) != 0 {
			t.Errorf("strict=%v: report = %+v, want empty", strict, rep)
		}
	}
}

// TestMergeTwoServersClash: the first server (in configuration order)
// keeps a shared name and the later one's tool is skipped with a warning
// naming both servers and toolPrefix; the start goes on.
func TestMergeTwoServersClash(t *testing.T) {
	a := serverTools{server: "files-a", tools: []*agent.Tool{mergeTool("read_file", "files-a")}}
	b := serverTools{server: "files-b", tools: []*agent.Tool{mergeTool("list", "files-b"), mergeTool("read_file", "files-b")}}
	for _, strict := range []bool{false, true} {
		set, report, err := merge(localTools(), []serverTools{a, b}, strict, Hints{})
		if err != nil {
			t.Fatalf("strict=%v: %v", strict, err)
		}
		got := strings.Join(origins(set), " ")
		if !strings.Contains(got, "read_file@files-a") || !strings.Contains(got, "list@files-b") || strings.Contains(got, "read_file@files-b") {
			t.Errorf("strict=%v: table %s, want read_file from files-a only and list from files-b", strict, got)
		}
		if len(report.Warnings) != 1 {
			t.Fatalf("strict=%v: warnings %q, want one", strict, report.Warnings)
		}
		for _, s := range []string{`"files-a"`, `"files-b"`, `"read_file"`, "toolPrefix", `"files-b_"`, "skipped"} {
			if !strings.Contains(report.Warnings[0], s) {
				t.Errorf("strict=%v: warning %q does not mention %s", strict, report.Warnings[0], s)
			}
		}
	}
}

func TestMergePrefixApplied(t *testing.T) {
	// The bridge applies toolPrefix; with it, the two servers no longer
	// clash with each other nor with the local tools.
	a := serverTools{server: "shop-a", tools: []*agent.Tool{mergeTool("a_getOrderStatus", "shop-a")}}
	b := serverTools{server: "shop-b", tools: []*agent.Tool{mergeTool("b_getOrderStatus", "shop-b")}}
	set, rep, err := merge(localTools(), []serverTools{a, b}, false, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"getOrderStatus@local", "createTicket@local", "escalateToHuman@local", "searchKnowledgeBase@local",
		"a_getOrderStatus@shop-a", "b_getOrderStatus@shop-b",
	}
	if diff := cmp.Diff(want, origins(set)); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if len(rep.Warnings) != 0 {
		t.Errorf("warnings = %q, want none", rep.Warnings)
	}
}

func TestMergeDuplicatesWithinOneSource(t *testing.T) {
	if _, _, err := merge([]*agent.Tool{mergeTool("x", ""), mergeTool("x", "")}, nil, false, Hints{}); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("duplicate local tools: err = %v, want one naming x", err)
	}
	s := serverTools{server: "buggy", tools: []*agent.Tool{mergeTool("y", "buggy"), mergeTool("y", "buggy")}}
	if _, _, err := merge(nil, []serverTools{s}, false, Hints{}); err == nil || !strings.Contains(err.Error(), `"buggy"`) {
		t.Errorf("duplicate tools in one server: err = %v, want one naming the server", err)
	}
	if _, _, err := merge([]*agent.Tool{nil}, nil, false, Hints{}); err == nil {
		t.Error("nil local tool: no error")
	}
}

// TestMergeSkipsNamelessTools: a server's tool without a name is skipped
// with a warning, not an error that would keep the chat from starting.
func TestMergeSkipsNamelessTools(t *testing.T) {
	s := serverTools{server: "broken", tools: []*agent.Tool{mergeTool("", "broken"), nil, mergeTool("fine", "broken")}}
	set, rep, err := merge(localTools(), []serverTools{s}, false, Hints{})
	if err != nil {
		t.Fatal(err)
	}
	if got := origins(set); got[len(got)-1] != "fine@broken" || len(got) != 5 {
		t.Errorf("table %v", got)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0] != `MCP server "broken" offered 2 tools without a name; skipped` {
		t.Errorf("warnings %q", rep.Warnings)
	}
}
