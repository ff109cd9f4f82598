package support_test

import (
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/skills"
	"github.com/agentapp/agentapp/support"
)

// TestPlaybooks: the shipped skills load without a fault, each with a
// references folder its SKILL.md links to relatively, every link inside
// the skill resolving to one of its files, every tool named being one the
// product has, and text in both languages.
func TestPlaybooks(t *testing.T) {
	f, skipped, err := skills.Load(support.Playbooks())
	if err != nil || len(skipped) > 0 {
		t.Fatalf("skills.Load: %v, skipped %v", err, skipped)
	}
	var names []string
	for _, e := range f.Entries() {
		names = append(names, e.Name())
	}
	if want := []string{"handoff", "order-status", "refunds"}; !slices.Equal(names, want) {
		t.Fatalf("shipped skills %v, want %v", names, want)
	}

	svc, _ := openService(t, t.TempDir())
	tools := map[string]bool{kb.MCPSearchToolName: true}
	for _, tool := range []*agent.Tool{svc.OrderStatusTool(), svc.CreateTicketTool(), svc.EscalateTool(), svc.RequestRefundTool(), svc.GetRefundStatusTool()} {
		tools[tool.Name] = true
	}
	for _, tool := range []string{"requestRefund", "getRefundStatus", "getOrderStatus", "createTicket", "escalateToHuman"} {
		if !tools[tool] {
			t.Fatalf("the product has no tool %s any more; update the playbooks and this test", tool)
		}
	}
	link := regexp.MustCompile(`\]\(([^)#]+)\)`)
	toolName := regexp.MustCompile("`((?:get|request|create|escalate|search)[A-Z][A-Za-z]*)`")
	han := regexp.MustCompile(`\p{Han}`)
	for _, e := range f.Entries() {
		if strings.Contains(e.Description(), "\n") {
			t.Errorf("%s: the description is not one line", e.Name())
		}
		if _, ok := f.Children(e.Dir() + "/references"); !ok {
			t.Errorf("%s has no references folder", e.Name())
		}
		for _, r := range e.Resources.Files {
			file, _ := f.File(r.URI)
			text := string(file.Data)
			if !han.MatchString(text) || !regexp.MustCompile(`[A-Za-z]{4,} [A-Za-z]{4,}`).MatchString(text) {
				t.Errorf("%s is not in both Chinese and English", r.URI)
			}
			for _, m := range toolName.FindAllStringSubmatch(text, -1) {
				if !tools[m[1]] {
					t.Errorf("%s names a tool %s the product does not have", r.URI, m[1])
				}
			}
			for _, m := range link.FindAllStringSubmatch(text, -1) {
				target := path.Join(path.Dir(r.URI), m[1])
				if strings.Contains(m[1], "://") {
					continue
				}
				if _, ok := e.File(strings.Replace(target, "skill:/", "skill://", 1)); !ok {
					t.Errorf("%s links to %s, which is not a file of the skill", r.URI, m[1])
				}
			}
		}
		body, _ := fs.ReadFile(support.Playbooks(), strings.TrimPrefix(e.URI, "skill://"))
		if !link.Match(body) {
			t.Errorf("%s links to none of its references", e.URI)
		}
	}
}
