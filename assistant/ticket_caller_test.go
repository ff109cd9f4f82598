package assistant_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a bearer token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestTicketsKeyedByToken (issue 43, item 10): over MCP, two clients with
// different bearer tokens who name their conversation alike and send the
// same ticket get a ticket each; the same token's retry gets its first.
func TestTicketsKeyedByToken(t *testing.T) {
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
	srv := mcpserver.New(assistant.ServerOptions(d.Support, d.KB, "test"))
	h := mcpserver.NewHTTPHandler(srv, &mcpserver.HTTPOptions{Token: "token-for-alice,token-for-bob"})
	defer h.CloseSessions()
	hs := httptest.NewServer(h)
	defer hs.Close()
	open := func(token string) string {
		t.Helper()
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + mcpserver.HTTPPath, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "createTicket", Meta: mcp.Meta{mcpserver.MetaSession: "conv-1"},
			Arguments: map[string]any{"subject": "broken kettle", "description": "order A-1024 arrived broken"}})
		if err != nil || res.IsError {
			t.Fatalf("createTicket: %v %+v", err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		i := strings.Index(text, "TK-")
		if i < 0 {
			t.Fatalf("no ticket id in %s", text)
		}
		return text[i : i+16]
	}
	alice, bob := open("token-for-alice"), open("token-for-bob")
	if alice == bob {
		t.Errorf("two tokens with the same conversation name share ticket %s", alice)
	}
	if again := open("token-for-alice"); again != alice {
		t.Errorf("alice's retry got %s; want %s", again, alice)
	}
}
