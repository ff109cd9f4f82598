package web

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDefaultPolicyRaisesApprovalForWriteTool: with no guard switch set,
// the default permission policy raises the page's approval before an MCP
// tool its server does not declare read-only (issue 30 item 2), naming
// the tool and the server, while a tool declared read-only runs without
// one.
func TestDefaultPolicyRaisesApprovalForWriteTool(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	var reads, writes atomic.Int32
	type in struct {
		Path string `json:"path"`
	}
	type out struct {
		OK bool `json:"ok"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, out, error) {
		reads.Add(1)
		return nil, out{OK: true}, nil
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "write_file"}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, out, error) {
		writes.Add(1)
		return nil, out{OK: true}, nil
	})
	b, err := mcpclient.ConnectInMemory(context.Background(), "files", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })

	m := scripted.New(
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("r1", "read_file", map[string]string{"path": "a.txt"})}},
		scripted.Turn{Calls: []model.ToolCall{scripted.Call("w1", "write_file", map[string]string{"path": "a.txt"})}},
		scripted.Turn{Text: "done"},
	)
	path := t.TempDir() + "/audit.log"
	a := guard.NewAudit(path, nil)
	t.Cleanup(func() { a.Close() })
	e := newEnv(t, m, func(o *envOptions) {
		o.Servers = []host.Server{b}
		o.Guards = &guard.Config{AuditLog: path} // every switch off: the default policy
	})
	id := e.newSession(t)
	s := e.send(t, id, "write a.txt")
	evs := s.until(t, "approval")
	var ap ApprovalEvent
	evs[len(evs)-1].decode(t, &ap)
	if ap.Decision != "pending" || ap.Tool != "write_file" || ap.Server != "files" || !strings.Contains(ap.Preview, "a.txt") {
		t.Fatalf("approval event %+v, want write_file of files pending", ap)
	}
	if reads.Load() != 1 || writes.Load() != 0 {
		t.Fatalf("before the answer: read_file ran %d times, write_file %d; want 1 and 0", reads.Load(), writes.Load())
	}
	for _, ev := range evs[:len(evs)-1] {
		if ev.Name == "approval" {
			t.Errorf("an approval was raised before write_file's: %s", ev.Data)
		}
	}
	if code := e.answer(t, id, ap.ID, false); code != http.StatusOK {
		t.Fatalf("answer: %d", code)
	}
	rest := s.rest(t)
	if d := decisionOf(t, rest); d != "denied" {
		t.Errorf("decision %q, want denied", d)
	}
	if writes.Load() != 0 {
		t.Errorf("write_file ran although denied")
	}
}
