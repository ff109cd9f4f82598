package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/mcpconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type formElicitor struct {
	mu    sync.Mutex
	asked []string
}

func (f *formElicitor) Elicit(_ context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	f.mu.Lock()
	f.asked = append(f.asked, server+": "+p.Message)
	f.mu.Unlock()
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "damaged"}}, nil
}

type askSampler struct {
	mu  sync.Mutex
	ask []bool
}

func (s *askSampler) CreateMessage(_ context.Context, req *SamplingRequest) (*mcp.CreateMessageResult, error) {
	s.mu.Lock()
	s.ask = append(s.ask, req.Ask)
	s.mu.Unlock()
	return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "sampled"}}, nil
}

// An input-required result of a 2026-07-28 server (a form, a sampling
// request and the roots in one round) is answered by the bridge's own
// handlers: the Elicitor (the form), the Sampler with the user's approval
// asked for (sampling "ask", the default), and the configured roots. The
// retry echoes requestState unchanged, and the tool's answer is what the
// model gets.
func TestInputRequiredThroughHostHandlers(t *testing.T) {
	root := t.TempDir()
	var rounds, states []string
	var mu sync.Mutex
	srv := mcp.NewServer(&mcp.Implementation{Name: "next", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "refund", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			states = append(states, req.Params.RequestState)
			if len(req.Params.InputResponses) == 0 {
				rounds = append(rounds, "ask")
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{
						"form": &mcp.ElicitParams{Message: "Why the refund?", RequestedSchema: map[string]any{
							"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string"}},
						}},
						"summary": &mcp.CreateMessageParams{MaxTokens: 50, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "summarise"}}}},
						"roots":   &mcp.ListRootsParams{},
					},
					RequestState: "opaque-state-1",
				}, nil
			}
			rounds = append(rounds, "answer")
			form, _ := req.Params.InputResponses["form"].(*mcp.ElicitResult)
			rootsRes, _ := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
			var sampled string
			switch s := req.Params.InputResponses["summary"].(type) {
			case *mcp.CreateMessageWithToolsResult:
				if len(s.Content) > 0 {
					if tc, ok := s.Content[0].(*mcp.TextContent); ok {
						sampled = tc.Text
					}
				}
			case *mcp.CreateMessageResult:
				if tc, ok := s.Content.(*mcp.TextContent); ok {
					sampled = tc.Text
				}
			}
			var uris []string
			if rootsRes != nil {
				for _, r := range rootsRes.Roots {
					uris = append(uris, r.URI)
				}
			}
			reason := ""
			if form != nil {
				reason = fmt.Sprint(form.Content["reason"])
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{
				Text: fmt.Sprintf("reason=%s sampled=%s roots=%s", reason, sampled, strings.Join(uris, ",")),
			}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer ts.Close()

	el, sa := &formElicitor{}, &askSampler{}
	b, err := Connect(context.Background(), mcpconfig.Server{Name: "next", URL: ts.URL},
		WithElicitor(el), WithSampler(sa, 1000), WithRoots([]string{root}))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v := b.session().InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s; the test needs 2026-07-28", v)
	}
	got, err := adExec(t, adTool(t, b, "refund"), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	rootURIs, err := rootURIs([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	if want := "reason=damaged sampled=sampled roots=" + rootURIs[0].URI; got != want {
		t.Errorf("tool answered %q, want %q", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(rounds, ",") != "ask,answer" || len(states) != 2 || states[0] != "" || states[1] != "opaque-state-1" {
		t.Errorf("rounds %v with requestState %q: want one input round, the state echoed unchanged", rounds, states)
	}
	if len(el.asked) != 1 || el.asked[0] != "next: Why the refund?" {
		t.Errorf("form asked %q", el.asked)
	}
	if len(sa.ask) != 1 || !sa.ask[0] {
		t.Errorf("sampling reached the sampler %d times, ask=%v: want once, with the user's approval asked for", len(sa.ask), sa.ask)
	}
}
