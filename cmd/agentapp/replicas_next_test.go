package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
	"github.com/agentapp/agentapp/support"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// alternate sends each request to the next replica in turn, with the
// bearer token: a load balancer without sticky sessions.
type alternate struct {
	replicas []*url.URL
	token    string
	n        atomic.Int64
	hits     []atomic.Int64
}

func (a *alternate) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(a.n.Add(1)-1) % len(a.replicas)
	a.hits[i].Add(1)
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host, r.Host = a.replicas[i].Scheme, a.replicas[i].Host, a.replicas[i].Host
	r.Header.Set("Authorization", "Bearer "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestReplicasNextGeneration: two `serve --http --token` replicas (default
// flags otherwise) on one PostgreSQL database answer one 2026-07-28
// client's requests alternately, with no sticky session: its calls, an
// input-required round for a refund without a reason (asked by one
// replica, the answer taken by the other, which accepts the state the
// first signed), and a refund task of the tasks extension created on one
// replica and followed to its decision on both.
func TestReplicasNextGeneration(t *testing.T) {
	db := storetest.NewPostgres(t)
	var urls []*url.URL
	for range 2 {
		u, err := url.Parse(startReplica(t, db.URL, "--token", "alice"))
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u)
	}
	lb := &alternate{replicas: urls, token: "alice", hits: make([]atomic.Int64, 2)}
	ctx := context.Background()
	asked := 0
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"reason": "arrived broken"}}, nil
		},
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: urls[0].String(), HTTPClient: &http.Client{Transport: lb}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("protocol %s, want 2026-07-28", v)
	}
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getOrderStatus", Arguments: map[string]any{"orderId": "A-1024"}})
		if err != nil || res.IsError {
			t.Fatalf("getOrderStatus: %v %+v", err, res)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "requestRefund", Arguments: map[string]any{"orderId": "A-1024"}})
	if err != nil || res.IsError || asked != 1 {
		t.Fatalf("refund without a reason across replicas: %v %+v (asked %d times)", err, res, asked)
	}
	if sc, _ := res.StructuredContent.(map[string]any); sc["reason"] != "arrived broken" {
		t.Errorf("filed %v, want the user's reason", sc)
	}

	// The refund task, through the extension, by raw requests (the SDK's
	// client has no tasks extension).
	post := func(method, name, params string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
		req, _ := http.NewRequest(http.MethodPost, urls[0].String(), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		resp, err := (&http.Client{Transport: lb}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var got struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Result == nil {
			t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
		}
		return got.Result
	}
	created := post("tools/call", "requestRefund", `"name":"requestRefund","arguments":{"orderId":"A-1024","reason":"late"}`)
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" || created["status"] != "working" {
		t.Fatalf("tools/call requestRefund with the extension: %v, want a working task", created)
	}
	for range 2 {
		if got := post("tasks/get", "", `"taskId":"`+id+`"`); got["status"] != "working" {
			t.Fatalf("tasks/get before the decision: %v", got)
		}
	}
	st, err := store.OpenURL(ctx, db.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := support.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DecideRefund(ctx, id, true, "refund sent"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		got := post("tasks/get", "", `"taskId":"`+id+`"`)
		if b, _ := json.Marshal(got); got["status"] != "completed" || !strings.Contains(string(b), "refund sent") {
			t.Fatalf("tasks/get after the decision: %s", b)
		}
	}
	if lb.hits[0].Load() < 4 || lb.hits[1].Load() < 4 {
		t.Errorf("requests per replica %d and %d: not alternated", lb.hits[0].Load(), lb.hits[1].Load())
	}
}
