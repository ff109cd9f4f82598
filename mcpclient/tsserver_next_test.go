package mcpclient

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startTSServerNext runs the TypeScript SDK v2 server (stateless) of
// .ci/tsserver-next and returns its endpoint.
func startTSServerNext(t *testing.T) string {
	return testkit.StartTSServerNext(t, filepath.Join("..", ".ci", "tsserver-next"))
}

// Against a TypeScript SDK v2 server (stateless): the bridge speaks
// 2026-07-28, lists and calls its tools, and answers its input-required
// round through the Elicitor (the chat's form); a declined form reaches the
// server, which refuses the refund.
func TestTypeScriptServerNext(t *testing.T) {
	url := startTSServerNext(t)
	el := &formElicitor{}
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url}, WithElicitor(el))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("negotiated %s with the TypeScript SDK v2 server", v)
	}
	if got, err := adExec(t, adTool(t, b, "add"), `{"a":2,"b":3}`); err != nil || got != "5" {
		t.Errorf("add: %q, %v", got, err)
	}
	got, err := adExec(t, adTool(t, b, "refund"), `{"order":"A-1"}`)
	if err != nil || got != "refunded A-1: damaged" {
		t.Errorf("refund: %q, %v", got, err)
	}
	if len(el.asked) != 1 || el.asked[0] != "ts: Why should order A-1 be refunded?" {
		t.Errorf("forms asked: %q", el.asked)
	}
}

type declineElicitor struct{}

func (declineElicitor) Elicit(context.Context, string, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	return &mcp.ElicitResult{Action: "decline"}, nil
}

func TestTypeScriptServerNextDeclined(t *testing.T) {
	url := startTSServerNext(t)
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "ts", URL: url}, WithElicitor(declineElicitor{}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	got, err := adExec(t, adTool(t, b, "refund"), `{"order":"A-1"}`)
	if !strings.Contains(got+errText(err), "did not give a reason (decline)") {
		t.Errorf("refund with the form declined: %q, %v", got, err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
