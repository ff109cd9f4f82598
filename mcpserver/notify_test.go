package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDocsChangedNotifiesClients: a server built with DocsChange promises
// resources/list_changed and sends it to every client on DocsChanged; one
// built without it promises nothing.
func TestDocsChangedNotifiesClients(t *testing.T) {
	docs := &fakeDocs{ids: []string{"a"}}
	server := mcpserver.New(&mcpserver.Options{Docs: docs, DocsChange: true})
	changed := make(chan int, 8)
	for i := range 2 {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := server.Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- i },
		})
		cs, err := c.Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close(); ss.Wait() })
		if r := cs.InitializeResult().Capabilities.Resources; r == nil || !r.ListChanged {
			t.Fatalf("capabilities %+v do not promise listChanged", r)
		}
	}
	server.DocsChanged()
	got := map[int]bool{}
	for len(got) < 2 {
		select {
		case i := <-changed:
			got[i] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("list_changed reached clients %v of 2", got)
		}
	}

	plain := connect(t, mcpserver.New(&mcpserver.Options{Docs: docs}))
	if r := plain.InitializeResult().Capabilities.Resources; r == nil || r.ListChanged {
		t.Errorf("without DocsChange the capabilities are %+v; want resources without listChanged", r)
	}
}

// TestMetaSessionKeysIdempotency: a tool sees the conversation a client
// names in _meta (MetaSession), the same on two servers; without it, each
// server's session is its own.
func TestMetaSessionKeysIdempotency(t *testing.T) {
	seen := make(chan string, 8)
	tool := &agent.Tool{
		Name:        "who",
		Description: "reports the session",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			seen <- agent.SessionFrom(ctx)
			return map[string]string{"ok": "yes"}, nil
		},
	}
	call := func(cs *mcp.ClientSession, meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "who", Arguments: map[string]any{}, Meta: meta})
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		return <-seen
	}
	a := connect(t, mcpserver.New(&mcpserver.Options{Tools: []*agent.Tool{tool}}))
	b := connect(t, mcpserver.New(&mcpserver.Options{Tools: []*agent.Tool{tool}}))
	conv := mcp.Meta{mcpserver.MetaSession: "conv-42"}
	if sa, sb := call(a, conv), call(b, conv); sa != sb || sa != "client:conv-42" {
		t.Errorf("the same conversation on two servers: sessions %q and %q, want both client:conv-42", sa, sb)
	}
	if sa, sb := call(a, nil), call(b, nil); sa == sb || sa == "" {
		t.Errorf("without _meta: sessions %q and %q, want two different ones", sa, sb)
	}
	long := make([]byte, 201)
	for i := range long {
		long[i] = 'x'
	}
	if s := call(a, mcp.Meta{mcpserver.MetaSession: string(long)}); s == "client:"+string(long) {
		t.Error("an over-long conversation name was used")
	}
}
