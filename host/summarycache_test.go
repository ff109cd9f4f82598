package host

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
)

// TestPrefixKeys: a prefix's key is the same for the same messages, and
// differs when text moves between fields or messages, when a message is
// added, and for another model.
func TestPrefixKeys(t *testing.T) {
	ctx := context.Background()
	newHost := func(name string) *Host {
		h, err := newHost(ctx, config{Model: namedModel{scripted.New(), name}, Store: openTestStore(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	h := newHost("one")
	u := func(s string) model.Message { return model.Message{Role: model.RoleUser, Content: s} }
	a := func(s string) model.Message { return model.Message{Role: model.RoleAssistant, Content: s} }
	base := h.prefixKeys([]model.Message{u("ab"), a("c")})
	if again := h.prefixKeys([]model.Message{u("ab"), a("c"), u("d")}); again[1] != base[1] || again[2] != base[2] || again[3] == base[2] {
		t.Errorf("a longer conversation's prefix keys %v do not extend %v", again, base)
	}
	seen := map[string]string{}
	for name, keys := range map[string][]string{
		"base":          base,
		"moved text":    h.prefixKeys([]model.Message{u("a"), a("bc")}),
		"another role":  h.prefixKeys([]model.Message{a("ab"), a("c")}),
		"into the name": h.prefixKeys([]model.Message{{Role: model.RoleUser, Content: "a", Name: "b"}, a("c")}),
		"another model": newHost("two").prefixKeys([]model.Message{u("ab"), a("c")}),
	} {
		if len(keys) != 3 {
			t.Fatalf("%s: %d keys for 2 messages, want 3", name, len(keys))
		}
		if other, ok := seen[keys[2]]; ok {
			t.Errorf("%s and %s have the same key", name, other)
		}
		seen[keys[2]] = name
	}
}

// TestFoldState: after folds, a stored session says how many messages
// are folded and stored since, their size and the summary.
func TestFoldState(t *testing.T) {
	ctx := context.Background()
	var turns []scripted.Turn
	for i := range 4 {
		turns = append(turns, scripted.Turn{Text: fmt.Sprintf("订单 A-%d 已发货。", 1000+i)})
	}
	h, err := newHost(ctx, config{Model: scripted.New(turns...), Store: openTestStore(t), Context: ContextOptions{Summarizer: budget.Extractive{}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for i := range 3 {
		if _, err := h.Run(ctx, Turn{Session: "f", Messages: []model.Message{{Role: model.RoleUser, Content: fmt.Sprintf("Where is A-%d?", 1000+i)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if f, err := h.FoldState(ctx, "f"); err != nil || f.Folds != 0 {
		t.Errorf("before any fold: %+v %v", f, err)
	}
	res, err := h.Compact(ctx, "f")
	if err != nil || res.Folded != 4 || res.Tokens <= 0 || res.Summary == "" {
		t.Fatalf("Compact = %+v, %v", res, err)
	}
	f, err := h.FoldState(ctx, "f")
	if err != nil || f.Folds != 1 || f.Messages != 4 || f.After != 2 || f.Tokens != res.Tokens || f.Summary != res.Summary || f.SummaryTokens != res.SummaryTokens {
		t.Errorf("FoldState = %+v, %v; want 1 fold of 4 messages (%d tokens), 2 after, the summary %q", f, err, res.Tokens, res.Summary)
	}
	if f, err := h.FoldState(ctx, "no-such-session"); err != nil || f.Folds != 0 {
		t.Errorf("an unknown session: %+v %v", f, err)
	}
}

// namedModel is a scripted model under another name.
type namedModel struct {
	*scripted.Model
	name string
}

func (m namedModel) Name() string { return m.name }
