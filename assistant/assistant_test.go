package assistant_test

import (
	"context"
	"slices"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/assistant/toolnames"
	"github.com/agentapp/agentapp/store"
)

func names(tools []*agent.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// TestToolNames holds the tools to the names the offline model knows
// (package toolnames): a renamed tool fails here, not in a demo.
func TestToolNames(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := assistant.OpenDomain(ctx, st, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	local := []string{toolnames.OrderStatus, toolnames.CreateTicket, toolnames.Escalate, toolnames.SearchKB}
	if got := names(d.Tools()); !slices.Equal(got, local) {
		t.Errorf("local tools = %v, want %v", got, local)
	}
	published := []string{toolnames.OrderStatus, toolnames.CreateTicket, toolnames.SearchKBRemote, toolnames.RequestRefund, toolnames.RefundStatus}
	if got := names(assistant.PublishedTools(d.Support, d.KB)); !slices.Equal(got, published) {
		t.Errorf("published tools = %v, want %v", got, published)
	}
	opts := assistant.ServerOptions(d.Support, d.KB, "test")
	if opts.Docs == nil || opts.Instructions != assistant.Instructions || len(opts.Tools) != len(published) {
		t.Errorf("ServerOptions = %+v", opts)
	}
}
