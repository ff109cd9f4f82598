package host

import (
	"context"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model/scripted"
)

// downServer is a supervised server that is not connected.
type downServer struct{ liveServer }

func (s *downServer) Status() mcpclient.Status { return mcpclient.Status{State: mcpclient.StateDown} }

// TestNewChecksPolicyNames: New fails when the confirm list or a rule
// names nothing configured, and only warns about names that may belong to
// a server that is down (supervised and stopped, inactive, or a project
// server nobody approved). The resource tools are names the table knows.
func TestNewChecksPolicyNames(t *testing.T) {
	ctx := context.Background()
	pat := func(s string) guard.Pattern {
		p, err := guard.ParsePattern(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	shop := &liveServer{name: "shop"}
	shop.offer("refund")
	down := &downServer{liveServer{name: "crm"}}
	rules := []guard.Rule{
		{Pattern: pat("shop:refund"), Permission: guard.Deny, Source: "--deny"},
		{Pattern: pat("crm:*"), Permission: guard.Ask, Source: "--ask"},
		{Pattern: pat("old:*"), Permission: guard.Ask, Source: "--ask"},
		{Pattern: pat("proj:*"), Permission: guard.Deny, Source: "--deny"},
	}
	g := guard.New(guard.Config{Confirm: []string{"readMcpResource"}, Permissions: guard.Permissions{Rules: rules}}, nil, nil)
	var warnings []string
	h, err := newHost(ctx, config{Model: scripted.New(), Servers: []Server{shop, down}, Inactive: []Inactive{{Name: "old", Disabled: true}},
		Unapproved: []string{"proj"}, Guards: g, Store: openTestStore(t),
		Notify: func(n Notice) { warnings = append(warnings, n.Text) }})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.Close()
	all := strings.Join(warnings, "\n")
	for _, s := range []string{`"crm"`, `"old"`, `"proj"`} {
		if !strings.Contains(all, "names MCP server "+s+", which is configured but not running") {
			t.Errorf("no warning for %s:\n%s", s, all)
		}
	}

	bad := guard.New(guard.Config{Permissions: guard.Permissions{Rules: []guard.Rule{{Pattern: pat("shop:refnd"), Permission: guard.Deny, Source: "--deny"}}}}, nil, nil)
	closed := &closeCounter{liveServer: shop}
	_, err = newHost(ctx, config{Model: scripted.New(), Servers: []Server{closed}, Guards: bad, Store: openTestStore(t)})
	if err == nil || !strings.Contains(err.Error(), `did you mean "refund"?`) {
		t.Fatalf("New with a rule naming no tool: %v", err)
	}
	if closed.n != 1 {
		t.Errorf("the server was closed %d times after the failed start, want 1", closed.n)
	}
}

type closeCounter struct {
	*liveServer
	n int
}

func (c *closeCounter) Close() error { c.n++; return nil }
