package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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

// noGET refuses the client's GET stream (as a server may, 405), so what a
// server sends during a call can only arrive on the call's own response.
type noGET struct{ ctype chan string }

func (n noGET) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		return &http.Response{StatusCode: http.StatusMethodNotAllowed, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && r.Header.Get("Mcp-Session-Id") != "" {
		select {
		case n.ctype <- res.Header.Get("Content-Type"):
		default:
		}
	}
	return res, err
}

// TestAskingSessionAsksOnTheCallsStream: a 2025-11-25 session whose client
// declared elicitation is answered with event streams, so the refund's
// question reaches the client on the call's own response even without a
// GET stream.
func TestAskingSessionAsksOnTheCallsStream(t *testing.T) {
	ts := httptest.NewServer(newHTTPHandler(t, mcpserver.New(newDomain(t).options()), nil))
	t.Cleanup(ts.Close)
	rt := noGET{ctype: make(chan string, 16)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "too late"}}, nil
		},
	}).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL + mcpserver.HTTPPath, HTTPClient: &http.Client{Transport: rt}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "requestRefund", Arguments: map[string]any{"orderId": "A-1024"}})
	if err != nil || res.IsError {
		t.Fatalf("refund without a reason, no GET stream: %v %+v", err, res)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["reason"] != "too late" {
		t.Errorf("filed %v, want the user's reason", sc)
	}
	sawStream := false
	for len(rt.ctype) > 0 {
		if ct := <-rt.ctype; strings.HasPrefix(ct, "text/event-stream") {
			sawStream = true
		}
	}
	if !sawStream {
		t.Error("no answer of the session was an event stream")
	}
}
