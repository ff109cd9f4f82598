package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refundClient connects a Go SDK client at version over HTTP to srv's
// handler; with elicit set it declares elicitation and answers with it.
func refundClient(t *testing.T, url, version string, elicit func(*mcp.ElicitRequest) *mcp.ElicitResult) *mcp.ClientSession {
	t.Helper()
	var opts *mcp.ClientOptions
	if elicit != nil {
		opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return elicit(req), nil
		}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, opts).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestRefundWithoutReasonAsks: requestRefund without a reason asks the
// user where the client declared elicitation (an input_required round at
// 2026-07-28, an elicitation request in a 2025-11-25 session; both on the
// SDK's path) and fails with "reason is required" where it did not.
func TestRefundWithoutReasonAsks(t *testing.T) {
	srv := mcpserver.New(newDomain(t).options())
	ts := httptest.NewServer(newHTTPHandler(t, srv, nil))
	t.Cleanup(ts.Close) // after the clients' Close (cleanups run last first)
	url := ts.URL + mcpserver.HTTPPath
	args := map[string]any{"orderId": "A-1024"}
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		asked := 0
		cs := refundClient(t, url, version, func(req *mcp.ElicitRequest) *mcp.ElicitResult {
			asked++
			if !strings.Contains(req.Params.Message, "refund") {
				t.Errorf("%s: asked %q", version, req.Params.Message)
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "arrived broken"}}
		})
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "requestRefund", Arguments: args})
		if err != nil || res.IsError || asked != 1 {
			t.Fatalf("%s with elicitation: %v %+v (asked %d times)", version, err, res, asked)
		}
		if sc, _ := res.StructuredContent.(map[string]any); sc["reason"] != "arrived broken" || sc["status"] != "pending" {
			t.Errorf("%s: filed %v, want the user's reason, pending", version, sc)
		}
		res, err = refundClient(t, url, version, nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "requestRefund", Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(resultText(t, res), "reason is required") {
			t.Errorf("%s without elicitation: %v %+v, want the tool error \"reason is required\"", version, err, res)
		}
	}
	if n := srv.DirectTaken(); n != 0 {
		t.Errorf("the direct path answered %d calls without a reason, want 0 (the SDK's path asks)", n)
	}
}

// TestRefundRequestStateChecked: the retry of an input-required round must
// bring back the server's requestState for the same call.
func TestRefundRequestStateChecked(t *testing.T) {
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(newDomain(t).options()), nil))
	t.Cleanup(ts.Close) // after the clients' Close (cleanups run last first)
	cs := refundClient(t, ts.URL+mcpserver.HTTPPath, "2026-07-28", func(*mcp.ElicitRequest) *mcp.ElicitResult {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "x"}}
	})
	answer := mcp.InputResponseMap{"reason": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "forged"}}}
	for _, state := range []string{"", "e30.AAAA", "not-a-state"} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "requestRefund",
			Arguments: map[string]any{"orderId": "A-1024"}, InputResponses: answer, RequestState: state})
		if err == nil || !strings.Contains(err.Error(), "requestState") {
			t.Errorf("requestState %q: %v, want it refused", state, err)
		}
	}
}
