package assistant_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store/storetest"
)

// TestRefundTaskExtensionAsksReason: over the tasks extension at
// 2026-07-28 (on the selected backend: SQLite, or PostgreSQL with
// AGENTAPP_TEST_BACKEND=postgres), requestRefund without a reason asks it
// in an input-required round before any task exists; the retry with the
// answer makes the refund task, filed with that reason, which tasks/get
// follows to the operator's decision; tasks/update is acknowledged (a
// refund task waits for a person, not for the client).
func TestRefundTaskExtensionAsksReason(t *testing.T) {
	ctx := context.Background()
	d, err := assistant.OpenDomain(ctx, storetest.Open(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := mcpserver.NewHTTPHandler(mcpserver.New(assistant.ServerOptions(d.Support, d.KB, "test")), &mcpserver.HTTPOptions{Token: "alice"})
	defer h.CloseSessions()
	hs := httptest.NewServer(h)
	defer hs.Close()
	post := func(method, name, params string) map[string]any {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
		req, _ := http.NewRequest(http.MethodPost, hs.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", method)
		if name != "" {
			req.Header.Set("Mcp-Name", name)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var got struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(raw, &got); err != nil || got.Result == nil {
			t.Fatalf("%s: %d %s", method, res.StatusCode, raw)
		}
		return got.Result
	}
	round := post("tools/call", "requestRefund", `"name":"requestRefund","arguments":{"orderId":"A-1024"}`)
	state, _ := round["requestState"].(string)
	if asks, _ := round["inputRequests"].(map[string]any); round["resultType"] != "input_required" || asks["reason"] == nil || state == "" || round["taskId"] != nil {
		t.Fatalf("requestRefund without a reason: %v, want an input-required round asking the reason", round)
	}
	// The caller as mcpserver names a bearer token.
	sum := sha256.Sum256([]byte("alice"))
	caller := "token:" + hex.EncodeToString(sum[:16])
	if ts, err := d.Support.RefundTasks(ctx, caller); err != nil || len(ts) != 0 {
		t.Fatalf("tasks before the answer: %v %v", ts, err)
	}
	quoted, _ := json.Marshal(state)
	created := post("tools/call", "requestRefund", `"name":"requestRefund","arguments":{"orderId":"A-1024"},"inputResponses":{"reason":{"action":"accept","content":{"reason":"arrived late"}}},"requestState":`+string(quoted))
	id, _ := created["taskId"].(string)
	if created["resultType"] != "task" || id == "" || created["status"] != "working" {
		t.Fatalf("the answered round: %v, want a working task", created)
	}
	if ts, err := d.Support.RefundTasks(ctx, caller); err != nil || len(ts) != 1 || ts[0].ID != id {
		t.Fatalf("the caller's tasks after the answer: %v %v, want the new one", ts, err)
	}
	if ack := post("tasks/update", id, `"taskId":"`+id+`","inputResponses":{"x":{"action":"accept"}}`); len(ack) != 1 || ack["resultType"] != "complete" {
		t.Errorf("tasks/update: %v, want the empty ack", ack)
	}
	if got := post("tasks/get", id, `"taskId":"`+id+`"`); got["status"] != "working" || got["inputRequests"] != nil {
		t.Fatalf("tasks/get before the decision: %v", got)
	}
	if _, err := d.Support.DecideRefund(ctx, id, true, "refund sent"); err != nil {
		t.Fatal(err)
	}
	got := post("tasks/get", id, `"taskId":"`+id+`"`)
	if b, _ := json.Marshal(got); got["status"] != "completed" || !strings.Contains(string(b), "arrived late") || !strings.Contains(string(b), "refund sent") {
		t.Fatalf("tasks/get after the decision: %s", b)
	}
}
