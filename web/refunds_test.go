package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/support"
)

// The operator lists refund requests and approves or declines them over
// HTTP with the operator token; a decision is final.
func TestOperatorRefunds(t *testing.T) {
	e := newEnv(t, offline.New(), func(o *Options) { o.Token = "s3cret" })
	ctx := support.WithCaller(context.Background(), "token:abc")
	var ids []string
	for _, order := range []string{"A-1024", "A-2048"} {
		r, err := e.srv.support.RequestRefund(ctx, "token:abc", order, "broken")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.RefundID)
	}
	req, _ := http.NewRequest(http.MethodGet, e.url("/operator/refunds"), nil)
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("refunds without the token: %d, want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = e.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Refunds []support.QueuedRefund `json:"refunds"`
	}
	json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list.Refunds) != 2 || list.Refunds[0].Status != support.RefundPending || list.Refunds[0].Caller != "token:abc" {
		t.Fatalf("refund list %+v", list.Refunds)
	}
	resp = e.post(t, "/operator/refunds/"+ids[0]+"/approve", `{"note":"sent back"}`, "Authorization", "Bearer s3cret", "Content-Type", "application/json")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"approved"`) || !strings.Contains(string(body), "sent back") {
		t.Errorf("approve: %d %s", resp.StatusCode, body)
	}
	resp = e.post(t, "/operator/refunds/"+ids[0]+"/decline", "", "Authorization", "Bearer s3cret")
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict {
		t.Errorf("a second decision: %d, want 409", resp.StatusCode)
	}
	resp = e.post(t, "/operator/refunds/"+ids[1]+"/decline", `{"nope":1}`, "Authorization", "Bearer s3cret", "Content-Type", "application/json")
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a body with an unknown field: %d, want 400", resp.StatusCode)
	}
	resp = e.post(t, "/operator/refunds/RF-nope/approve", "", "Authorization", "Bearer s3cret")
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown request: %d, want 404", resp.StatusCode)
	}
	r, err := e.srv.support.Refund(ctx, "token:abc", ids[0])
	if err != nil || r.Status != support.RefundApproved {
		t.Errorf("after approval the caller reads %+v, %v", r, err)
	}
}
