package chat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpclient/skills/skilltest"
)

// TestSkillsCommand: /skills lists each server's skills with whether they
// are loaded, /skills show prints a verified SKILL.md and refuses a
// tampered one, and /help names the command.
func TestSkillsCommand(t *testing.T) {
	srv := skilltest.New(
		skilltest.Skill{Dir: "refunds", Files: map[string]string{"SKILL.md": skilltest.MD("refunds", "How to handle a refund request", "REFUND-STEPS\n")}},
		skilltest.Skill{Dir: "returns", Files: map[string]string{"SKILL.md": skilltest.MD("returns", "How to take a parcel back", "RETURN-STEPS\n")}},
	)
	srv.Tamper("skill://returns/SKILL.md", skilltest.MD("returns", "How to take a parcel back", "EVIL-STEPS\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := mcpclient.ConnectInMemory(ctx, "shop", srv.MCP(true))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, &ruleModel{}, openTestStore(t), "/skills\n/skills show shop refunds\n/skills show shop returns\n/skills\n/skills show\n/help\n"+
		`call:loadSkill {"server":"shop","name":"refunds"}`+"\n"+`call:loadSkill {"server":"shop","name":"returns"}`+"\n/exit\n")
	h.host.Servers = []host.Server{b}
	h.run(t)
	out := h.out.String()
	for _, s := range []string{
		"2 skills (the model loads one with loadSkill, which you approve):\n  shop: refunds  How to handle a refund request\n  shop: returns  How to take a parcel back\n",
		"Skill refunds of MCP server shop (skill://refunds/SKILL.md), verified against its entry:\n---\nname: refunds\n",
		"REFUND-STEPS\n",
		"skill file skill://returns/SKILL.md from MCP server shop failed verification, so none of it was used",
		"  shop: refunds (loaded)  How to handle a refund request\n  shop: returns           How",
		"Usage: /skills",
		"/skills            list the MCP servers' skills",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("stdout lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "EVIL-STEPS") {
		t.Errorf("the tampered skill was shown:\n%s", out)
	}
	// The model's loads: the chat shows each call; the verified body
	// reaches the model fenced, the tampered one not at all.
	errOut := h.err.String()
	for _, s := range []string{
		`→ loadSkill (MCP skills) {"server":"shop","name":"refunds"}`,
		"✓ loadSkill",
		"✗ loadSkill failed after",
	} {
		if !strings.Contains(out+errOut, s) {
			t.Errorf("output lacks %q:\n%s\n%s", s, out, errOut)
		}
	}
	if !strings.Contains(out, `tool said: {"notice":"The text between <<<DATA`) || !strings.Contains(out, `REFUND-STEPS`) {
		t.Errorf("the model did not get the skill:\n%s", out)
	}
}
